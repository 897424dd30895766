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

from eventjax.kernels.common.eager import one_program_when_eager

__all__ = ['CHUNK_SLOTS', 'by_event_chunks', 'by_event_count', 'by_event_pieces', 'capacities', 'compact',
           'event_count_prefix', 'event_mask', 'piece_width', 'running_count']


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
    return _compact(mask, cap, prefix)


@one_program_when_eager(1)
def _compact(mask, cap, prefix):
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
    return _event_count_prefix(mask)


@one_program_when_eager()
def _event_count_prefix(mask):
    return running_count(mask, mask.shape[0])


def running_count(counts, most: int):
    """The running sum (inclusive) of the non-negative integers ``counts``, as int32; ``most`` bounds the total.

    Counted as :func:`event_count_prefix` counts (float32 products, exact
    while ``most`` is below 2**24; a parallel scan past that).

    Example:
        >>> running_count(jnp.array([2, 0, 3]), 5)
        Array([2, 2, 5], dtype=int32)
    """
    if counts.shape[0] == 0:
        return counts.astype(jnp.int32)
    if most >= _EXACT:
        return jax.lax.associative_scan(jnp.add, counts.astype(jnp.int32))
    return jnp.round(_running_sum(counts.astype(jnp.float32))).astype(jnp.int32)


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


# Slots (entries) one pass of :func:`by_event_chunks` covers: at 100 entries per
# neuron, 81 neurons a pass. Passes cost a fixed few microseconds each on
# XLA:CPU, and a pass with fewer events still pays for all its slots.
CHUNK_SLOTS = 8192
# The first pass is this many times narrower than the others (see by_event_chunks).
HEAD_FRACTION = 8


def piece_width(entries: int, rows: int, longest: int) -> int:
    """Slots a pass of :func:`by_event_pieces` gives a row: 1.25x the mean row, a multiple of 8, at most ``longest``.

    The rows of a random graph then take one piece, and one long row among
    short ones takes pieces of its own instead of widening every pass.

    Example:
        >>> piece_width(1000, 100, 20_000), piece_width(400, 4, 100)
        (16, 100)
    """
    return max(1, min(longest, -(-(5 * -(-entries // max(rows, 1))) // 32) * 8))


def by_event_pieces(mask, lengths, width: int, longest: int, body: Callable, carry, *, past_longest: bool = True):
    """``carry = body(neurons, valid, skip, slots, carry)`` over the event rows of ``mask``, a piece at a time.

    A piece is a :func:`by_event_chunks` over the event rows still longer
    than ``skip``, each given ``slots`` slots from ``skip`` on: slots
    ``[0, width)``, then ``[width, 2 width)``, ``[2 width, 4 width)``, ...,
    doubling until ``longest`` (a static bound) is covered. So rows of about
    ``width`` take one piece, and one long row among short ones takes a few
    pieces of its own (its length in slots, twice at most) instead of
    widening every row's pass; a piece no event row reaches costs a pass
    over ``mask`` and nothing else. With ``past_longest``, rows longer than
    ``longest`` (a wrong promise under ``jit``) take further pieces of the
    last size, so they cost time, never entries; without it the loop
    counts stay concrete for concrete inputs (reverse-mode differentiable).
    ``carry`` stays a loop carry throughout (in place).

    Example:
        >>> lens = jnp.array([5, 0, 2])
        >>> body = lambda rows, valid, skip, slots, total: total + jnp.sum(
        ...     jnp.where(valid, jnp.clip(lens[rows] - skip, 0, slots), 0))
        >>> int(by_event_pieces(jnp.array([True, False, True]), lens, 2, 5, body, jnp.int32(0)))
        7
    """
    skip, slots = 0, width
    while True:
        carry = by_event_chunks(mask & (lengths > skip), slots,
                                lambda neurons, valid, c, skip=skip, slots=slots: body(neurons, valid, skip, slots, c),
                                carry)
        if skip + slots >= longest:
            break
        skip, slots = skip + slots, skip + slots  # the next piece doubles what is covered
    if not past_longest:
        return carry
    done = skip + slots
    extra = ((jnp.max(jnp.where(mask, lengths, 0)) - done + slots - 1) // slots).astype(jnp.int32)

    def piece(p, carry):
        start = (done + p * slots).astype(lengths.dtype)  # int64 lengths under x64
        return by_event_chunks(mask & (lengths > start), slots,
                               lambda neurons, valid, c: body(neurons, valid, start, slots, c), carry)

    return jax.lax.fori_loop(0, jnp.maximum(extra, 0), piece, carry)


def by_event_chunks(mask, slots_per_event: int, body: Callable, carry, chunk: int | None = None):
    """``carry = body(neurons, valid, carry)`` over the events of ``mask``, a chunk of neurons at a time.

    For in-place updates: ``carry`` (the weights) is a ``lax.fori_loop``
    carry, which XLA updates in place, where a :func:`by_event_count` switch
    would hand each branch a copy on XLA:CPU. ``neurons`` lists the next
    ``chunk`` event neurons (``valid`` False past the last event, whose
    ``neurons`` repeat a real one: mask their slots); ``chunk`` is
    ``CHUNK_SLOTS // slots_per_event`` neurons, at most a quarter of
    ``mask`` (so a few events in a small network do not pay for all of it),
    at least one; the first pass takes only ``chunk // HEAD_FRACTION``
    neurons, so a handful of events costs a narrow pass (at 4,000 neurons
    and 0.1% events an update in a scan measured half the time). Each pass
    finds its neurons by a binary search of the running event count, so no
    pass reads all of ``mask``. A given ``chunk``: that many neurons every
    pass, the first too (for a body whose pass costs the same however many
    events it holds).

    Example:
        >>> body = lambda neurons, valid, total: total + jnp.sum(jnp.where(valid, neurons, 0))
        >>> int(by_event_chunks(jnp.array([False, True, True, False, True]), 1, body, jnp.int32(0)))
        7
    """
    m = mask.shape[0]
    if m == 0:
        return carry
    prefix = event_count_prefix(mask)
    total = prefix[-1]
    if chunk is None:
        chunk = max(1, min(CHUNK_SLOTS // max(slots_per_event, 1), m // 4))
        head = max(1, chunk // HEAD_FRACTION)
    else:
        head = chunk

    def passes(width, first, count, carry):
        def one_pass(c, carry):
            # Events ranked first + c * width + 1 ...: the first neuron whose running count reaches the rank.
            rank = first + c * width + jnp.arange(1, width + 1, dtype=jnp.int32)
            neurons = jnp.searchsorted(prefix, rank, side='left', method='scan_unrolled').astype(jnp.int32)
            return body(jnp.minimum(neurons, m - 1), rank <= total, carry)
        return jax.lax.fori_loop(0, (count + width - 1) // width, one_pass, carry)

    if head == chunk:
        return passes(chunk, 0, total, carry)
    # The first events go through a narrow pass, the rest through wide ones: a few events (a low rate, a
    # small network) then pay for a few slots, not for a whole wide pass. Two loops, not a switch: each
    # carries the weights in place.
    carry = passes(head, 0, jnp.minimum(total, head), carry)
    return passes(chunk, head, jnp.maximum(total - head, 0), carry)
