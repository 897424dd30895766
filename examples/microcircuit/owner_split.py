"""PD14's delivery on two threads, each owning half of the ring's columns and reading only its synapses.

The library's layout delivery (``DelayedCSR.deliver``, numba) splits a
call in two parts by ring slot: each thread adds into every other slot, but
both read every synapse of the step's event rows to find theirs. Here each
row is stored in two parts (:mod:`network`: the synapses onto columns below
``split_column``, then the rest, each part sorted by delay) with
``splits[r]`` where row ``r``'s second part begins, so thread 0 reads and
delivers ``[indptr[r], splits[r])`` and thread 1 ``[splits[r], indptr[r +
1])``: half the reads each, and each adds into its own half of the ring.

Every ring entry receives its adds from one thread, rows in ascending order
and a row's synapses in stored order; the split is a stable partition of
the delay-sorted row, so the ring is bit for bit the one-thread delivery's
of the row sorted by delay alone.

``owner_split_deliver(ring, spikes, W, splits, t)``: ``W`` a
:class:`eventjax.DelayedCSR` built from those rows; the ring is updated in
place (donated, or a ``lax.scan`` carry). The structure is trusted (built
by :func:`network.build_connectivity` and checked once by :func:`check_splits`).
"""

from __future__ import annotations

import jax
import numba
import numpy as np

import eventjax as ej
from eventjax.backends.numba import prefetch, threading_layer
from eventjax.kernels.common.numba.scatter import event_rows, packed_rows

# The caches are asked for a row's synapses ROWS_AHEAD event rows ahead, and for the ring entry of a
# synapse SYNAPSES_AHEAD synapses ahead: measured 1.3x faster on one thread than asking for a whole
# row's ring entries a row or two ahead (77,169 columns, 60 slots, rows of 3,900 synapses).
ROWS_AHEAD = 2
SYNAPSES_AHEAD = 64
PARALLEL_MIN_SYNAPSES = 1 << 14  # below, one thread delivers both parts: waking the other costs microseconds
_U = np.uint64


@numba.njit(inline='always')
def _bounds(indptr, splits, r, part):
    if part == 0:
        return np.int64(indptr[r]), np.int64(splits[r])
    return np.int64(splits[r]), np.int64(indptr[r + 1])


@numba.njit(inline='always')
def _part(rows, count, data, offsets, indptr, splits, flat, n, size, base, part):
    """Deliver part ``part`` of the event rows ``rows[:count]``: ``flat[(base + offsets[k] - n) mod size] += w``."""
    span = size - n  # offsets[k] - n below it: a delay in [1, L) (-1, dropped, and 0 wrap to huge)
    for a in range(count):
        if a + ROWS_AHEAD < count:
            lo, hi = _bounds(indptr, splits, rows[a + ROWS_AHEAD], part)
            for q in range(lo, hi, 16):
                prefetch(offsets, q)
                prefetch(data, q)
        lo, hi = _bounds(indptr, splits, rows[a], part)
        next_lo, next_hi = _bounds(indptr, splits, rows[a + 1], part) if a + 1 < count else (hi, hi)
        for k in range(lo, hi):
            ahead = k + SYNAPSES_AHEAD  # past the row's end: the next event row's synapses
            if ahead >= hi:
                ahead = next_lo + ahead - hi
                if ahead >= next_hi:
                    ahead = -1
            if ahead >= 0:
                o = _U(np.int64(offsets[ahead])) - n
                if o < span:
                    q = o + base
                    prefetch(flat, q - size * _U(q >= size))
            o = _U(np.int64(offsets[k])) - n
            if o < span:
                q = o + base
                flat[q - size * _U(q >= size)] += data[k]


@numba.njit(inline='always')
def _deliver_rows(rows, count, data, offsets, indptr, splits, t, out):
    length, n = _U(out.shape[0]), _U(out.shape[1])
    if length == 0 or n == 0:
        return
    size = length * n
    now = _U(np.int64(t[0]) % np.int64(length))
    base = (now + _U(1)) * n
    flat = out.reshape(-1)
    work = 0
    for a in range(count):
        work += np.int64(indptr[rows[a] + 1]) - np.int64(indptr[rows[a]])
    if work < PARALLEL_MIN_SYNAPSES:
        for part in range(2):
            _part(rows, count, data, offsets, indptr, splits, flat, n, size, base, part)
        return
    for part in numba.prange(2):
        _part(rows, count, data, offsets, indptr, splits, flat, n, size, base, part)


@numba.njit(parallel=True)
def _deliver(ring, events, data, offsets, indptr, splits, t, out):
    rows = np.empty(events.shape[0], np.int64)
    _deliver_rows(rows, event_rows(events, rows), data, offsets, indptr, splits, t, out)


@numba.njit(parallel=True)
def _deliver_words(ring, words, data, offsets, indptr, splits, t, out):
    m = indptr.shape[0] - 1
    rows = np.empty(m, np.int64)
    _deliver_rows(rows, packed_rows(words, m, rows), data, offsets, indptr, splits, t, out)


def _reference(ring, events, data, offsets, indptr, splits, t):
    """The jax kernel: the library's delivery of the same rows (the split changes no sum's order per entry)."""
    m, n = events.shape[0], ring.shape[1]
    layout = ej.CSRDelayLayout(data, None, indptr, None, offsets, shape=(m, n), ring_length=ring.shape[0])
    return (ej.csr_delay_deliver_layout(ring, events, layout, t[0], backend='jax'),)


_kernel = ej.XLACustomKernel('pd14_owner_split_deliver')
_kernel.def_numba_kernel(lambda outs: _deliver)
_kernel.def_jax_kernel(lambda outs: _reference)


def owner_split_deliver(ring, spikes, W, splits, t, backend='numba'):
    """``W.deliver(ring, spikes, t)`` for rows stored in two parts at ``splits`` (bool spikes; see the module).

    Example:
        >>> import jax.numpy as jnp
        >>> import numpy as np
        >>> import eventjax as ej
        >>> # row 0: column 0 (delay 2) | column 1 (delay 1); split at column 1
        >>> W = ej.DelayedCSR(ej.CSRDelayLayout(jnp.array([1., 2.]), None, jnp.array([0, 2]), None,
        ...                                     jnp.array([4, 3], jnp.int32), shape=(1, 2), ring_length=3))
        >>> owner_split_deliver(W.init_ring(), jnp.array([True]), W, jnp.array([1]), 0)
        Array([[0., 0.],
               [0., 2.],
               [1., 0.]], dtype=float32)
    """
    lay = W.layout
    out = jax.ShapeDtypeStruct(ring.shape, ring.dtype)
    t = jax.numpy.asarray(t, jax.numpy.int32).reshape(1)
    return _kernel(ring, spikes, lay.data, lay.offsets, lay.indptr, splits, t, outs=(out,),
                   input_output_aliases={0: 0}, backend=backend)[0]


def _reference_words(ring, words, data, offsets, indptr, splits, t):
    events = ej.bitunpack(words, indptr.shape[0] - 1)
    return _reference(ring, events, data, offsets, indptr, splits, t)


_words_kernel = ej.XLACustomKernel('pd14_owner_split_deliver_words')
_words_kernel.def_numba_kernel(lambda outs: _deliver_words)
_words_kernel.def_jax_kernel(lambda outs: _reference_words)


def owner_split_deliver_words(ring, words, data, offsets, indptr, splits, t, backend='numba'):
    """:func:`owner_split_deliver` with the spikes packed (``eventjax.bitpack``'s words: bit ``b`` of word ``w``
    is row ``32 w + b``; rows past the matrix's are ignored), as ``all_gather_spike_words`` delivers them.

    Example:
        >>> import jax.numpy as jnp
        >>> ring = owner_split_deliver_words(jnp.zeros((3, 2)), jnp.array([1], jnp.uint32), jnp.array([1., 2.]),
        ...                                  jnp.array([4, 3], jnp.int32), jnp.array([0, 2]), jnp.array([1]), 0)
        >>> ring.tolist()
        [[0.0, 0.0], [0.0, 2.0], [1.0, 0.0]]
    """
    out = jax.ShapeDtypeStruct(ring.shape, ring.dtype)
    t = jax.numpy.asarray(t, jax.numpy.int32).reshape(1)
    return _words_kernel(ring, words, data, offsets, indptr, splits, t, outs=(out,), input_output_aliases={0: 0},
                         backend=backend)[0]


def check_split_bounds(who, indptr, splits):
    """``(indptr, splits)`` as int64 arrays; raise ValueError unless each ``splits[r]`` lies within row ``r``
    (a split outside its row would have a part read past the row)."""
    indptr, splits = np.asarray(indptr, np.int64), np.asarray(splits, np.int64)
    if splits.shape != (indptr.shape[0] - 1,) or np.any(splits < indptr[:-1]) or np.any(splits > indptr[1:]):
        raise ValueError(f'{who}: each split must lie within its row, [indptr[r], indptr[r + 1]].')
    return indptr, splits


def check_splits(indptr, offsets, splits, split_column, n):
    """Raise ValueError unless every row ``r`` holds its columns below ``split_column`` in ``[indptr[r], splits[r])``
    and the others in ``[splits[r], indptr[r + 1])`` (two threads would otherwise add into one entry)."""
    indptr, splits = check_split_bounds('check_splits()', indptr, splits)
    # The process' first parallel kernel fixes numba's threading layer, so the library's choice (TBB where
    # installed) comes first. Left to numba it was OpenMP, whose threads spin-wait: with a core taken by
    # another process, each step's delivery then waited a scheduler slice (milliseconds) for its second
    # thread, where TBB runs that thread's part on the calling one.
    threading_layer()
    if not _parts_hold_their_columns(indptr, np.asarray(offsets), splits, split_column, n):
        raise ValueError(f'check_splits(): a row has a synapse on the wrong side of column {split_column}.')


@numba.njit(cache=True, parallel=True)
def _parts_hold_their_columns(indptr, offsets, splits, split_column, n):
    bad = 0
    for r in numba.prange(splits.shape[0]):
        for k in range(indptr[r], indptr[r + 1]):
            o = offsets[k]
            if o >= 0 and (o % n >= split_column) != (k >= splits[r]):
                bad += 1
    return bad == 0
