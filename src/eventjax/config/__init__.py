"""The thread-safe configuration runtime (see :mod:`eventjax.config.runtime`)."""

from eventjax.config.numba_parallel import get_numba_parallel, set_numba_parallel
from eventjax.config.runtime import (
    clear_backends,
    current_override,
    get_backend,
    get_numba_num_threads,
    get_pallas_cpu_interpret,
    override,
    set_backend,
    set_numba_num_threads,
    set_pallas_cpu_interpret,
    snapshot,
    update,
)
from eventjax.config.snapshot import PLATFORMS, ConfigSnapshot, PrimitiveTable, normalize_backend, normalize_platform

__all__ = [
    'PLATFORMS',
    'ConfigSnapshot',
    'PrimitiveTable',
    'clear_backends',
    'current_override',
    'get_backend',
    'get_numba_num_threads',
    'get_numba_parallel',
    'get_pallas_cpu_interpret',
    'normalize_backend',
    'normalize_platform',
    'override',
    'set_backend',
    'set_numba_num_threads',
    'set_numba_parallel',
    'set_pallas_cpu_interpret',
    'snapshot',
    'update',
]
