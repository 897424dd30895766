"""The thread-safe configuration runtime (see :mod:`eventjax.config.runtime`)."""

from eventjax.config.interpret import get_pallas_cpu_interpret, set_pallas_cpu_interpret
from eventjax.config.runtime import (
    Draft,
    bind_snapshot,
    clear_backends,
    current_override,
    drafting,
    get_backend,
    override,
    prepare,
    prepare_backend,
    register_backend_catalog,
    set_backend,
    snapshot,
    update,
    warming,
)
from eventjax.config.snapshot import (
    PLATFORM_ALIASES,
    PLATFORMS,
    ConfigSnapshot,
    PrimitiveTable,
    normalize_backend,
    normalize_platform,
)
from eventjax.config.table import (
    ConfigurationStats,
    configuration_stats,
    get_max_configurations,
    set_max_configurations,
)

__all__ = [
    'ConfigurationStats',
    'Draft',
    'bind_snapshot',
    'configuration_stats',
    'get_max_configurations',
    'prepare',
    'prepare_backend',
    'set_max_configurations',
    'warming',
    'PLATFORMS',
    'PLATFORM_ALIASES',
    'ConfigSnapshot',
    'PrimitiveTable',
    'clear_backends',
    'current_override',
    'drafting',
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
