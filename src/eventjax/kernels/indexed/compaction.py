"""Spike vector <-> index list: ``compact_events`` and ``expand_events``.

Under ``jit`` an index list needs a static length, the *capacity*. The list
keeps the true number of events, so overflow (more events than the
capacity) is never silent: eagerly it raises ``ValueError``; traced, the
list keeps its first ``capacity`` events plus the true ``count``, and every
product of an overflowed list is NaN in every entry (on every backend), so a
simulation that outgrew its capacity shows it at once.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from eventjax.kernels.common.checks import check_events, check_rank, is_concrete
from eventjax.kernels.common.compaction import compact, event_count_prefix, event_mask

__all__ = ['compact_events', 'expand_events']


def check_capacity(who: str, capacity) -> int:
    """``capacity`` as a non-negative Python int (a static shape); a NumPy integer (``n // 10`` of one) counts."""
    if isinstance(capacity, (bool, np.bool_)) or not isinstance(capacity, (int, np.integer)) or capacity < 0:
        raise TypeError(f'{who}: capacity must be a non-negative Python int (the static length of the index '
                        f'list), got {capacity!r}.')
    return int(capacity)


def compact_events(spikes, capacity: int | None = None):
    """The indices of the events of a spike vector, in order: ``(ids, count)``.

    For an event matrix ``(n, k)`` (a batch of ``k`` spike vectors) the list
    holds the rows with an event in any column (brainevent's
    ``CompactBinary`` compacts so).

    ``ids`` has length ``capacity`` (default: ``len(spikes)``, which never
    overflows) and int32 dtype; slots past ``count`` hold ``len(spikes)``,
    an index every product ignores. ``count`` (int32, shape ``()``) is the
    true number of events, also when it exceeds ``capacity``.

    Overflow is never a silent drop: with concrete spikes it raises
    ``ValueError``; under ``jit`` the first ``capacity`` events are kept
    and every product of the list is NaN (see :func:`binary_csrmv_indexed`);
    test ``count > capacity`` to handle it yourself.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ids, count = ej.compact_events(jnp.array([0., 1., 0., 2.]), 3)
        >>> ids, count
        (Array([1, 3, 4], dtype=int32), Array(2, dtype=int32))
    """
    who = 'compact_events()'
    spikes = check_events(who, 'spikes', spikes)
    check_rank(who, 'spikes', spikes, (1, 2))
    n = spikes.shape[0]
    capacity = n if capacity is None else check_capacity(who, capacity)
    mask = event_mask(spikes)
    if mask.ndim == 2:
        mask = jnp.any(mask, axis=1)
    if n == 0:
        return jnp.zeros((capacity,), jnp.int32), jnp.zeros((), jnp.int32)
    prefix = event_count_prefix(mask)
    count = prefix[-1]
    if is_concrete(count) and int(count) > capacity:
        raise ValueError(f'{who}: {int(count)} events do not fit in capacity {capacity}; '
                         f'pass a capacity of at least {int(count)} (under jit the list keeps its true count '
                         f'and its products are NaN).')
    return compact(mask, capacity, prefix), count


def expand_events(ids, count, size: int):
    """The bool spike vector of length ``size`` that an index list stands for (inverse of :func:`compact_events`).

    Only the first ``min(count, len(ids))`` slots are read; indices outside
    ``[0, size)`` are ignored.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.expand_events(jnp.array([1, 3, 4]), jnp.array(2), 4)
        Array([False,  True, False,  True], dtype=bool)
    """
    ids = jnp.asarray(ids)
    live = (jnp.arange(ids.shape[0]) < count) & (ids >= 0)  # a negative index would wrap
    return jnp.zeros((size,), bool).at[jnp.where(live, ids, size)].set(True, mode='drop')
