"""The thread-safe configuration: its core (:mod:`.runtime`) and its setters (:mod:`.setters`)."""

import warnings

from eventjax.config.runtime import (
    Draft,
    bind_snapshot,
    current_override,
    drafting,
    prepare,
    snapshot,
    update,
    warming,
)
from eventjax.config.setters import (
    clear_backends,
    get_backend,
    override,
    prepare_backend,
    register_backend_catalog,
    set_backend,
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
    'moved_setting',
    'normalize_backend',
    'normalize_platform',
    'override',
    'register_backend_catalog',
    'set_backend',
    'snapshot',
    'update',
]

# Settings that moved from here to the backend they belong to: old name -> (new name, object).
# The backends fill it at import; config itself names no backend.
_MOVED: dict = {}
REMOVED_IN = '0.3.0'


def moved_setting(old: str, new: str, value) -> None:
    """Keep ``eventjax.config.<old>`` working until :data:`REMOVED_IN`: it gives ``value`` and warns, naming ``new``.

    Example:
        >>> moved_setting('example_setting', 'eventjax.backends.jax.example_setting', print)
    """
    _MOVED[old] = (new, value)


def __getattr__(name: str):
    if name in _MOVED:
        new, value = _MOVED[name]
        warnings.warn(f'eventjax.config.{name} is deprecated and goes in {REMOVED_IN}; use {new}.',
                      DeprecationWarning, stacklevel=2)
        return value
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
