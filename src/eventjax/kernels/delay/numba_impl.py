"""Numba CPU kernels for delayed delivery.

``kernel(ring, events, data, indices, indptr, delays, t, out, err)`` where
``out`` aliases ``ring`` (the operator binds with
``input_output_aliases={0: 0}``): it already holds the ring, and the kernel
visits only the rows that carry an event and adds each kept synapse into
``out[slot, column]``. Under donation or in a ``lax.scan`` carry that is all
the work, so a delivery costs events x synapses, not the ring's size.

For large structures (from ``PREFETCH_MIN_ENTRIES`` stored entries; only
matrices of that many entries get the kernel that can take this path) the
kernel lists the event rows first and runs a two-stage pipeline: it asks
the caches for the columns, weights and delays of the row ``2 * ROWS_AHEAD``
rows ahead, and for the ring entries the row ``ROWS_AHEAD`` ahead will add
to (its columns and delays have arrived by then). A delivery's writes land
anywhere in a ring ``L`` times the size of one output vector; issued as
hints, those misses overlap instead of stalling one add after another
(the delay page of the docs has the figures).

Bad structure is dropped the same way as on every backend: ``indptr`` goes
through ``trusted_indptr`` (the repair the others get in JAX), and a column
outside ``[0, n)`` or a delay outside ``[1, L)`` (read unsigned, a negative
one is huge) contributes nothing. ``err`` stays unused.
"""

from __future__ import annotations

import numba
import numpy as np

from eventjax.backends.numba import empty_vector, prefetch
from eventjax.kernels.common.numba.events import (
    PREFETCH_MIN_ENTRIES,
    ROWS_AHEAD,
    event_indices,
    prefetch_entries,
    trusted_indptr,
)
from eventjax.kernels.common.numba.scatter import event_rows

__all__ = ['csr_delay_deliver_kernel', 'csr_delay_deliver_layout_kernel']

# The layout kernel asks for the ring entries of the row ahead from a ring of this many entries on
# (float32: 2 MiB, beyond a core's level-2 cache); below, the ring stays in that cache and the hints
# cost more than they save.
TARGETS_PREFETCH_MIN = 1 << 19
# The parts of a large layout delivery, one per thread: the kernel reads no thread count (numba's
# get_num_threads is a dynamic global, which would keep the handler out of the disk cache). Below
# PARTS_MIN_SYNAPSES synapses a call runs as one part: a parallel launch costs microseconds.
PARTS = 2
PARTS_MIN_SYNAPSES = 1 << 14

_U = np.uint64


@numba.njit(cache=True, inline='always')
def _deliver_row(flat, data, indices, delays, start, end, now, value, n, length, binary):
    """``flat[slot * n + column] += w * value`` over the synapses ``[start, end)`` (binary: ``+= w``)."""
    homogeneous_w, homogeneous_d = data.shape[0] == 1, delays.shape[0] == 1
    for k in range(start, end):
        j = _U(np.int64(indices[k]))
        d = _U(np.int64(delays[0] if homogeneous_d else delays[k]))
        if j >= n or d - _U(1) >= length - _U(1):  # d in [1, L): d - 1 wraps to huge for 0
            continue
        slot = now + d
        slot -= length * _U(slot >= length)  # no branch: random delays would mispredict it a third of the time
        w = data[0] if homogeneous_w else data[k]
        flat[slot * n + j] += w if binary else w * value


@numba.njit(cache=True, inline='always')
def _prefetch_targets(out, indices, delays, start, end, now, n, length):
    """Ask the caches for the ring entries of the synapses ``[start, end)`` (a hint; dropped ones skipped)."""
    homogeneous_d = delays.shape[0] == 1
    for k in range(start, end):
        j = _U(np.int64(indices[k]))
        d = _U(np.int64(delays[0] if homogeneous_d else delays[k]))
        if j < n and d < length:
            slot = now + d
            if slot >= length:
                slot -= length
            prefetch(out, (slot, j))


@numba.njit(cache=True, inline='always')
def _is_event(x, weighted):
    return x != 0 if weighted else x > 0


@numba.njit(cache=True, inline='always')
def _now(out, t):
    """The ring slot of step ``t`` (floor modulo: a negative ``t`` counts back from the end)."""
    return _U(np.int64(t[0]) % np.int64(out.shape[0]))


@numba.njit(cache=True, inline='always')
def _deliver_each_row(events, data, indices, indptr, delays, now, out, weighted):
    """Every row, tested for an event (``indptr`` is trusted)."""
    length, n = _U(out.shape[0]), _U(out.shape[1])
    one = out.dtype.type(1)
    flat = out.reshape(-1)
    for i in range(events.shape[0]):
        x = events[i]
        if _is_event(x, weighted):
            _deliver_row(flat, data, indices, delays, _U(np.int64(indptr[i])), _U(np.int64(indptr[i + 1])), now,
                         out.dtype.type(x) if weighted else one, n, length, not weighted)


@numba.njit(cache=True)
def _deliver(events, data, indices, indptr, delays, t, out, weighted):
    """The delivery of a structure below ``PREFETCH_MIN_ENTRIES`` stored entries."""
    if out.shape[0] == 0 or out.shape[1] == 0:
        return
    _deliver_each_row(events, data, indices, trusted_indptr(indptr, indices.shape[0]), delays, _now(out, t), out,
                      weighted)


@numba.njit(cache=True)
def _deliver_pipelined(events, data, indices, indptr, delays, t, out, weighted):
    """The delivery that lists the event rows and prefetches ahead from ``PREFETCH_MIN_ENTRIES`` stored entries on."""
    length, n = _U(out.shape[0]), _U(out.shape[1])
    nnz = indices.shape[0]
    if length == 0 or n == 0:
        return
    indptr = trusted_indptr(indptr, nnz)
    now = _now(out, t)
    if nnz < PREFETCH_MIN_ENTRIES:
        _deliver_each_row(events, data, indices, indptr, delays, now, out, weighted)
        return
    one = out.dtype.type(1)
    flat = out.reshape(-1)
    rows = _event_rows(events, weighted)
    for a in range(rows.shape[0]):
        if a + 2 * ROWS_AHEAD < rows.shape[0]:
            ahead = rows[a + 2 * ROWS_AHEAD]
            lo, hi = np.int64(indptr[ahead]), np.int64(indptr[ahead + 1])
            prefetch_entries(indices, lo, hi)
            if delays.shape[0] != 1:
                prefetch_entries(delays, lo, hi)
            if data.shape[0] != 1:
                prefetch_entries(data, lo, hi)
        if a + ROWS_AHEAD < rows.shape[0]:
            ahead = rows[a + ROWS_AHEAD]
            _prefetch_targets(out, indices, delays, _U(np.int64(indptr[ahead])), _U(np.int64(indptr[ahead + 1])),
                              now, n, length)
        i = rows[a]
        _deliver_row(flat, data, indices, delays, _U(np.int64(indptr[i])), _U(np.int64(indptr[i + 1])), now,
                     out.dtype.type(events[i]) if weighted else one, n, length, not weighted)


@numba.njit(cache=True)
def _event_rows(events, weighted):
    if not weighted:
        return event_indices(events)
    rows = empty_vector(events.shape[0], np.int64)
    count = 0
    for i in range(events.shape[0]):
        if events[i] != 0:
            rows[count] = i
            count += 1
    return rows[:count]


def _deliver_entry(deliver, weighted):
    """The kernel of one delivery (``_deliver`` or ``_deliver_pipelined``) and one event mode."""
    @numba.njit(cache=True)
    def kernel(ring, events, data, indices, indptr, delays, t, out, err):
        deliver(events, data, indices, indptr, delays, t, out, weighted)
    return kernel


_binary, _weighted = _deliver_entry(_deliver, False), _deliver_entry(_deliver, True)
_binary_pipelined = _deliver_entry(_deliver_pipelined, False)
_weighted_pipelined = _deliver_entry(_deliver_pipelined, True)


def csr_delay_deliver_kernel(*, shape, weighted):
    """The numba kernel of ``csr_delay_deliver``: one per event mode; ``out`` aliases ``ring``.

    Only a matrix of ``PREFETCH_MIN_ENTRIES`` entries or more (``m * n``)
    gets the kernel that can take the prefetching pipeline: a smaller one
    (without repeated entries) never reaches it, and its kernel compiles in
    a third of the time.
    """
    m, n = shape
    if m * n >= PREFETCH_MIN_ENTRIES:
        return _weighted_pipelined if weighted else _binary_pipelined
    return _weighted if weighted else _binary


# --- The layout form: one packed offset per synapse -------------------------------------------


@numba.njit(cache=True)
def _deliver_layout(events, data, offsets, indptr, t, out, weighted):
    """The layout delivery on one thread: the one part that owns every slot."""
    if out.shape[0] == 0 or out.shape[1] == 0:
        return
    trusted, rows, count, now, _ = _layout_parts_setup(events, offsets, indptr, t, out, weighted, 1)
    _layout_part(events, data, offsets, trusted, rows, count, out, now, _U(0), _U(1), weighted)


@numba.njit(cache=True)
def _layout_binary(ring, events, data, offsets, indptr, t, out, err):
    _deliver_layout(events, data, offsets, indptr, t, out, False)


@numba.njit(cache=True)
def _layout_weighted(ring, events, data, offsets, indptr, t, out, err):
    _deliver_layout(events, data, offsets, indptr, t, out, True)


# --- The layout form on several threads: each owns the ring slots ``slot % parts == part`` ----------------


@numba.njit(cache=True, inline='always')
def _owned_row(flat, data, offsets, start, end, base, n, span, size, now1, length, part, parts, value, binary,
               hint):
    """``flat[(base + offsets[k] - n) mod size] += w(k)`` over ``[start, end)`` (``hint``: ask the caches for those
    entries) for the synapses kept (``offsets[k] - n < span``) whose slot this ``part`` owns.

    ``offsets[k] - n`` is unsigned: -1 (dropped at build) and a delay of 0
    both wrap to huge. A row sorted by delay is a few runs of one delay each
    (one slot): the slot and its owner are worked out once per run, and a
    run another part owns is only read. Any order is right, an unsorted row
    just has more runs.
    """
    homogeneous = data.shape[0] == 1
    k = start
    while k < end:
        o = _U(np.int64(offsets[k])) - n
        if o >= span:
            k += _U(1)
            continue
        low = o - o % n  # (delay - 1) * n: the run's first offset
        mine = (now1 + low // n) % length % parts == part
        while True:
            if mine:
                q = o + base
                q -= size * _U(q >= size)
                if hint:
                    prefetch(flat, q)
                else:
                    w = data[0] if homogeneous else data[k]
                    flat[q] += w if binary else w * value
            k += _U(1)
            if k >= end:
                break
            o = _U(np.int64(offsets[k])) - n
            if o - low >= n:  # another delay (or a dropped synapse: huge)
                break


@numba.njit(cache=True, inline='always')
def _layout_part(events, data, offsets, trusted, rows, count, out, now, part, parts, weighted):
    """Part ``part`` of ``parts`` of a layout delivery: the event rows' synapses whose slot it owns."""
    length, n = _U(out.shape[0]), _U(out.shape[1])
    size = length * n
    span, base = size - n, (now + _U(1)) * n
    flat = out.reshape(-1)
    targets_ahead = size >= _U(TARGETS_PREFETCH_MIN)
    entries_ahead = offsets.shape[0] >= PREFETCH_MIN_ENTRIES
    one = out.dtype.type(1)
    for a in range(count):
        if entries_ahead and a + 2 * ROWS_AHEAD < count:
            ahead = rows[a + 2 * ROWS_AHEAD]
            lo, hi = np.int64(trusted[ahead]), np.int64(trusted[ahead + 1])
            prefetch_entries(offsets, lo, hi)
            if data.shape[0] != 1:
                prefetch_entries(data, lo, hi)
        if targets_ahead and a + ROWS_AHEAD < count:
            ahead = rows[a + ROWS_AHEAD]
            _owned_row(flat, data, offsets, _U(np.int64(trusted[ahead])), _U(np.int64(trusted[ahead + 1])), base, n,
                       span, size, now + _U(1), length, part, parts, one, True, True)
        i = rows[a]
        _owned_row(flat, data, offsets, _U(np.int64(trusted[i])), _U(np.int64(trusted[i + 1])), base, n, span, size,
                   now + _U(1), length, part, parts, out.dtype.type(events[i]) if weighted else one, not weighted,
                   False)


@numba.njit(cache=True, inline='always')
def _layout_parts_setup(events, offsets, indptr, t, out, weighted, parts):
    """``(trusted indptr, event rows, their count, now, parts)`` of a layout delivery in up to ``parts`` parts."""
    trusted = trusted_indptr(indptr, offsets.shape[0])
    now = _U(np.int64(t[0]) % np.int64(out.shape[0]))
    if weighted:
        rows = _event_rows(events, True)
        count = rows.shape[0]
    else:
        rows = empty_vector(events.shape[0], np.int64)
        count = event_rows(events, rows)
    work = 0
    for a in range(count if parts > 1 else 0):
        work += np.int64(trusted[rows[a] + 1]) - np.int64(trusted[rows[a]])
    return trusted, rows, count, now, parts if work >= PARTS_MIN_SYNAPSES else 1


# Part p of a call on several threads adds only into the ring slots s with s % parts == p (one delay's
# synapses all land in one slot): no two threads write one entry, and every entry receives its adds in the
# order one thread gives them, so the ring is bit for bit the serial kernel's. Each part reads all event rows.
def _layout_parts_entry(weighted):
    """The layout kernel of one event mode on numba's threads (not numba's cache: the bridge caches its handler)."""
    @numba.njit(parallel=True)
    def kernel(ring, events, data, offsets, indptr, t, out, err):
        if out.shape[0] == 0 or out.shape[1] == 0:
            return
        trusted, rows, count, now, parts = _layout_parts_setup(events, offsets, indptr, t, out, weighted, PARTS)
        for part in numba.prange(parts):
            _layout_part(events, data, offsets, trusted, rows, count, out, now, _U(part), _U(parts), weighted)
    return kernel


_layout_binary_parts, _layout_weighted_parts = _layout_parts_entry(False), _layout_parts_entry(True)


def csr_delay_deliver_layout_kernel(*, shape, weighted):
    """The numba kernel of ``csr_delay_deliver_layout`` (packed offsets), one per event mode; ``out`` is ``ring``.

    A matrix of ``PREFETCH_MIN_ENTRIES`` entries or more (``m * n``) gets
    the kernel that delivers on numba's threads (``_layout_*_parts``); a
    smaller one the serial kernel, whose handler compiles faster.
    """
    m, n = shape
    if m * n >= PREFETCH_MIN_ENTRIES:
        return _layout_weighted_parts if weighted else _layout_binary_parts
    return _layout_weighted if weighted else _layout_binary
