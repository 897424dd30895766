"""The configuration table's size: how many configurations keep their keys, and its counts.

The table itself lives in :mod:`eventjax.config.runtime`, under its lock;
these read it and bound it (``eventjax info`` shows the counts).
"""

from __future__ import annotations

import attrs

from eventjax.config.runtime import _STATE, _evict

__all__ = ['ConfigurationStats', 'configuration_stats', 'get_max_configurations', 'set_max_configurations']


@attrs.frozen
class ConfigurationStats:
    """How many configurations the runtime keeps keys for, and how many keys it ever made."""

    cached: int
    limit: int
    keys_made: int
    keys_dirtied: int
    changes: int


def configuration_stats() -> ConfigurationStats:
    """Counts of the configuration table (what ``eventjax info`` shows).

    Example:
        >>> import eventjax as ej
        >>> stats = ej.config.configuration_stats()
        >>> 1 <= stats.cached <= stats.limit
        True
    """
    with _STATE.lock:
        s = _STATE
        return ConfigurationStats(len(s.slots), s.max_slots, s.next_key, s.dirtied, s.epoch)


def set_max_configurations(limit: int) -> None:
    """Keep keys for at most ``limit`` configurations (default 64, or ``EVENTJAX_MAX_CONFIGURATIONS``).

    A configuration dropped from the table gets a fresh key when it comes
    back, so its code is compiled again; the executables under the dropped
    key stay in JAX's caches until their own entry limits evict them.

    Example:
        >>> import eventjax as ej
        >>> ej.config.set_max_configurations(64)
    """
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 2:
        raise ValueError(f'set_max_configurations(): limit must be a whole number of at least 2, got {limit!r}.')
    with _STATE.lock:
        _STATE.max_slots = limit
        _evict()


def get_max_configurations() -> int:
    """How many configurations the runtime keeps keys for."""
    return _STATE.max_slots
