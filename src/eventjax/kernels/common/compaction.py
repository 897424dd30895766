"""Event compaction for the ``jax`` kernels: visit only the rows that hold events.

XLA needs static shapes, so the rows of the events are gathered into one of
a few static capacities, chosen at run time by the event count (``lax.switch``):
a 2% event rate then costs about 2% of the dense work plus the compaction.
The compaction is a prefix count (blocked triangular products) and one
scatter of each event's index into its slot; XLA:CPU lowers ``jnp.cumsum``
and ``jnp.nonzero`` to a reduce-window several times slower.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp

__all__ = ['by_event_count', 'capacities', 'compact', 'event_count_prefix', 'event_mask']


def event_mask(x):
    """Where ``x`` holds an event: ``True``, or ``> 0`` (NaN never).

    Example:
        >>> event_mask(jnp.array([0.5, -1.0, jnp.nan, 2.0]))
        Array([ True, False, False,  True], dtype=bool)
    """
    return x if x.dtype == jnp.bool_ else x > 0


def capacities(n: int) -> tuple[int, ...]:
    """The static capacities below ``n`` a compaction may use, ascending: ``n/128, n/32, n/8, n/2``.

    Each is 4x the last, so the work done is at most ~4x what the events need;
    capacities under 8 rows are left out (the next one up is as cheap).

    Example:
        >>> capacities(4000)
        (31, 125, 500, 2000)
    """
    return tuple(c for c in (n // 128, n // 32, n // 8, n // 2) if c >= 8)


def compact(mask, cap: int, prefix=None):
    """The indices of the first ``cap`` entries of ``mask`` that are True, in order, then ``len(mask)``.

    ``prefix`` is :func:`event_count_prefix` of ``mask`` when the caller
    already has it.

    Example:
        >>> compact(jnp.array([False, True, False, True]), 3)
        Array([1, 3, 4], dtype=int32)
    """
    n = mask.shape[0]
    prefix = event_count_prefix(mask) if prefix is None else prefix
    # The k-th True entry goes to slot k - 1; the others (and those past cap) are dropped.
    slot = jnp.where(mask, prefix - 1, cap)
    return jnp.full((cap,), n, jnp.int32).at[slot].set(jnp.arange(n, dtype=jnp.int32), mode='drop')


_BLOCK = 32
_EXACT = 2 ** 24  # float32 counts are exact below this


def event_count_prefix(mask):
    """The running count of True entries of ``mask`` (inclusive), as int32.

    Blocks of 32 are counted with a product by a triangular matrix, then the
    block totals the same way: a few products instead of the ~2 log2(n)
    passes of a parallel scan (4x faster at 100,000 entries on XLA:CPU).

    Example:
        >>> event_count_prefix(jnp.array([True, False, True, True]))
        Array([1, 1, 2, 3], dtype=int32)
    """
    if mask.shape[0] >= _EXACT:
        return jax.lax.associative_scan(jnp.add, mask.astype(jnp.int32))
    return jnp.round(_running_sum(mask.astype(jnp.float32))).astype(jnp.int32)


def _running_sum(x):
    n = x.shape[0]
    # HIGHEST: a TPU's or GPU's default float32 product rounds its inputs (counts past 256 would not be exact).
    dot = lambda a, b: jnp.dot(a, b, precision=jax.lax.Precision.HIGHEST)
    if n <= _BLOCK:
        return dot(x, jnp.triu(jnp.ones((n, n), jnp.float32)))
    blocks = -(-n // _BLOCK)
    inner = dot(jnp.pad(x, (0, blocks * _BLOCK - n)).reshape(blocks, _BLOCK),
                jnp.triu(jnp.ones((_BLOCK, _BLOCK), jnp.float32)))
    totals = inner[:, -1]
    before = _running_sum(totals) - totals
    return (inner + before[:, None]).reshape(-1)[:n]


def by_event_count(mask, branch: Callable, full: Callable, *, limit: int | None = None,
                   fallback: Callable | None = None, use_fallback=None):
    """``branch(index)`` on the compacted event indices of ``mask``, or ``full()`` when there are too many.

    The capacity is the smallest of :func:`capacities` that holds every
    event (capacities above ``limit`` are left out); ``index`` lists the
    events then pads with ``len(mask)``, an index the branch must treat as
    empty. A branch is traced once per capacity.
    ``fallback()`` replaces all of them where the traced ``use_fallback`` is
    True (one switch: nested conditionals cost XLA:CPU more).
    """
    caps = tuple(c for c in capacities(mask.shape[0]) if limit is None or c <= limit)
    prefix = event_count_prefix(mask)
    branches = [lambda p, c=c: branch(compact(mask, c, p)) for c in caps] + [lambda p: full()]
    which = jnp.sum(prefix[-1] > jnp.asarray(caps, jnp.int32)).astype(jnp.int32) if caps else jnp.int32(0)
    if fallback is not None:
        branches.append(lambda p: fallback())
        which = jnp.where(use_fallback, len(branches) - 1, which)
    return jax.lax.switch(which, branches, prefix)
