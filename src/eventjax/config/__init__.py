"""The thread-safe configuration runtime (see :mod:`eventjax.config.runtime`)."""

from eventjax.config.runtime import (
    clear_backends,
    current_override,
    get_backend,
    get_pallas_cpu_interpret,
    override,
    register_backend_catalog,
    set_backend,
    set_pallas_cpu_interpret,
    snapshot,
    update,
)
from eventjax.config.snapshot import (
    PLATFORM_ALIASES,
    PLATFORMS,
    ConfigSnapshot,
    PrimitiveTable,
    normalize_backend,
    normalize_platform,
)

__all__ = [
    'PLATFORMS',
    'PLATFORM_ALIASES',
    'ConfigSnapshot',
    'PrimitiveTable',
    'clear_backends',
    'current_override',
    'get_backend',
    'get_pallas_cpu_interpret',
    'normalize_backend',
    'normalize_platform',
    'override',
    'register_backend_catalog',
    'set_backend',
    'set_pallas_cpu_interpret',
    'snapshot',
    'update',
]
