"""The event-row scatter the binary vector products share (numba, cpu): the rows of the events, then their entries.

A transposed binary product (events on the stored rows) adds the weights of
the event rows into the output: ``out[indices[k]] += w(k)`` over the
entries ``k`` of each event row. The bool, index-list and bit-packed forms
differ only in how they find the rows, so each turns its events into a list
of entry ranges (:func:`event_rows`, :func:`packed_rows`, then
``spans[r] = (start, end)``) and calls :func:`scatter_spans`, or
:func:`scatter_spans_threaded` for a matrix large enough to need threads
(:func:`scatter_kernel` picks when the kernel is chosen: the split over
threads is most of the compile time of a dtype signature).

Why the loops look the way they do (the measurements are on the docs'
Kernel speed page):

- A bool vector is read eight flags per 64-bit word, and a block of eight
  words with no event costs one test, where a test per flag costs one per
  neuron and its branch mispredicts once per event.
- Set bits of packed words are found by counting trailing zeros (one step
  per event, not per bit).
- From :data:`SCATTER_PARALLEL_MIN_ENTRIES` visited entries on (about a
  million), the event
  rows are split by entry count over numba's threads, each adding into its
  own copy of the output, and the copies are summed at the end (split by
  output column, so no two threads write one entry). The split is fixed by
  the thread count, so a call gives the same sums every time.
- From ``PREFETCH_MIN_ENTRIES`` stored entries on (beyond the last-level
  cache) the entries of the row ``ROWS_AHEAD`` ahead are asked for early.

Columns outside ``[0, n)`` and permutation entries outside ``data`` are
dropped, so no read or write is out of bounds whatever the structure holds.
"""

from __future__ import annotations

import numba
import numpy as np
from numba.cpython.unsafe.numbers import trailing_zeros
from numba.extending import intrinsic, overload

from eventjax.backends.numba import by_inputs, empty_vector, launch_begin, launch_end, threading_layer
from eventjax.kernels.common.numba.events import PREFETCH_MIN_ENTRIES, ROWS_AHEAD, prefetch_entries

__all__ = ['SCATTER_PARALLEL_MIN_ENTRIES', 'event_rows', 'packed_rows', 'scatter_entries', 'scatter_kernel',
           'scatter_spans', 'scatter_spans_threaded']

_U = np.uint64

# A scatter that visits this many entries or more (events x row length) runs on numba's threads.
# At 100,000 neurons and 2% events (200,000 entries) two threads took 0.7x the time of one when the
# call ran alone, but 1.1-1.3x when it ran right after XLA's own threaded work (a 600 x 600 matrix
# product), as it does inside a model's step: the second thread is late and the copies (zeroed, then
# summed: 2 x n values) are paid anyway. From a million entries (several ms on one thread) that
# delay is small beside the half of the work a second thread takes over.
SCATTER_PARALLEL_MIN_ENTRIES = 1 << 20
# A failed bounds check inside a parallel region is not safe (as for by_work): serial then.
_THREADS_ALLOWED = not numba.config.BOUNDSCHECK



def _is_bool(x):  # pragma: no cover - replaced by the overload in compiled code
    return x.dtype == np.bool_


@overload(_is_bool)
def _is_bool_overload(x):
    answer = isinstance(x.dtype, numba.types.Boolean)
    return lambda x: answer


@intrinsic
def _flag_words(typingctx, x, count):
    """The first ``8 * count`` bytes of the C-contiguous vector ``x`` as ``count`` 64-bit words (a view).

    What ``x[:8 * count].view(np.uint64)`` gives, lowered in place: numba
    compiles that slice and view as a function of their own, 0.13 s of a
    first call.
    """
    if not (isinstance(x, numba.types.Array) and x.ndim == 1 and x.layout == 'C'):
        raise numba.core.errors.TypingError(f'event_rows: the events must be a C-contiguous vector, not {x}')
    words = numba.types.Array(numba.types.uint64, 1, 'C')

    def codegen(context, builder, sig, args):
        from numba.np.arrayobj import make_array, populate_array

        source = make_array(sig.args[0])(context, builder, args[0])
        view = make_array(words)(context, builder)
        itemsize = context.get_constant(numba.types.intp, 8)
        populate_array(view, data=builder.bitcast(source.data, view.data.type),
                       shape=[context.cast(builder, args[1], sig.args[1], numba.types.intp)],
                       strides=[itemsize], itemsize=itemsize, meminfo=None)
        return view._getvalue()

    return words(x, count), codegen


@numba.njit(cache=True)
def event_rows(x, rows):
    """Write the indices of the events of the vector ``x`` into ``rows`` (length ``len(x)``), in order; return how many.

    A bool ``x`` (C-contiguous) is read 64 flags at a time (eight 64-bit
    words): blocks without an event cost one test.
    """
    n = x.shape[0]
    count = 0
    start = 0
    if _is_bool(x):
        blocks = n // 64
        words = _flag_words(x, blocks * 8)
        for q in range(blocks):
            hit = _U(0)
            for r in range(8):
                hit |= words[8 * q + r]
            if hit == 0:
                continue
            for r in range(8):
                w = words[8 * q + r]
                if w == 0:
                    continue
                base = (8 * q + r) * 8
                for b in range(8):
                    rows[count] = base + b
                    count += (w >> _U(8 * b)) & _U(0xFF) != 0
        start = blocks * 64
    for i in range(start, n):
        if x[i] > 0:
            rows[count] = i
            count += 1
    return count


@numba.njit(cache=True)
def packed_rows(words, m, rows):
    """Write the rows ``i < m`` whose bit is set in the packed ``words`` (bit ``b`` of word ``q``: row ``32 q + b``)."""
    count = 0
    for q in range(words.shape[0]):
        w = _U(np.uint32(words[q]))
        while w != 0:
            i = np.int64(q) * 32 + np.int64(trailing_zeros(w))
            if i < m:
                rows[count] = i
                count += 1
            w &= w - _U(1)
    return count


@numba.njit(cache=True, inline='always')
def scatter_entries(data, indices, start, end, out):
    """out[indices[k]] += w(k) over the entries ``k`` in ``[start, end)`` (unsigned bounds within ``indices``).

    ``w(k)`` is ``data[0]`` when ``data`` has one entry, else ``data[k]``; a
    column outside ``[0, len(out))`` is dropped. Inlined where it is called,
    so a kernel that calls it compiles no function of its own for it.
    """
    n = _U(out.shape[0])
    if data.shape[0] == 1:
        w = data[0]
        for k in range(start, end):
            j = _U(np.int64(indices[k]))
            if j < n:
                out[j] += w
    else:
        for k in range(start, end):
            j = _U(np.int64(indices[k]))
            if j < n:
                out[j] += data[k]


@numba.njit(cache=True, inline='always')
def _scatter(data, indices, perm, spans, a0, a1, out, permuted, ahead):
    """out[indices[k]] += w(k) over the entries of spans[a0:a1]; a loop per weight form (a branch per entry: 5x).

    The entry index ``k`` is unsigned: a signed one makes numba wrap
    negative indices on every read (a shift, an and and an add per array),
    which cost 1.6x at 4,000 neurons (where the output fits in the first-level cache) and 5-7% at 100,000
    (there the random adds into the output, an L2 read-modify-write, bound
    the loop).
    """
    n, nd = _U(out.shape[0]), _U(data.shape[0])
    nnz = np.int64(indices.shape[0]) if not permuted else np.int64(min(indices.shape[0], perm.shape[0]))
    for a in range(a0, a1):
        if ahead and a + ROWS_AHEAD < a1:
            lo, hi = spans[a + ROWS_AHEAD, 0], spans[a + ROWS_AHEAD, 1]
            prefetch_entries(indices, lo, hi)
            if permuted:
                prefetch_entries(perm, lo, hi)
            elif nd != 1:
                prefetch_entries(data, lo, hi)
        start = _U(min(max(np.int64(spans[a, 0]), 0), nnz))
        end = _U(min(max(np.int64(spans[a, 1]), 0), nnz))
        if nd == 1 or not permuted:
            scatter_entries(data, indices, start, end, out)
        else:
            for k in range(start, end):
                j, p = _U(np.int64(indices[k])), _U(np.int64(perm[k]))
                if j < n and p < nd:
                    out[j] += data[p]


@numba.njit(cache=True)
def _scatter_share(data, indices, perm, spans, a0, a1, out, permuted, ahead):
    """One thread's share: ``out`` (the output or a copy) = 0, then the scatter of ``spans[a0:a1]``."""
    out[:] = 0
    _scatter(data, indices, perm, spans, a0, a1, out, permuted, ahead)


@numba.njit(cache=True)
def _add_copies(out, copies, lo, hi):
    """out[lo:hi] += the copies' entries, copy by copy (a fixed order: the same sums every call)."""
    for c in range(copies.shape[0]):
        for j in range(lo, hi):
            out[j] += copies[c, j]


@numba.njit(cache=True, parallel=True)
def _scatter_threads(data, indices, perm, spans, cut, out, copies, permuted, ahead):
    """Share ``t`` (``spans[cut[t]:cut[t + 1]]``) into the output (t = 0) or ``copies[t - 1]``, then their sum.

    The loop bodies are calls, not inlined loops: numba's parallel
    compilation then takes a fraction of the time.
    """
    shares, n = cut.shape[0] - 1, out.shape[0]
    for t in numba.prange(shares):
        if t == 0:
            _scatter_share(data, indices, perm, spans, cut[0], cut[1], out, permuted, ahead)
        else:
            _scatter_share(data, indices, perm, spans, cut[t], cut[t + 1], copies[t - 1], permuted, ahead)
    for t in numba.prange(shares):
        _add_copies(out, copies, n * t // shares, n * (t + 1) // shares)


@numba.njit(cache=True)
def _shares(spans, count, total, shares):
    """cut[t]: the first span of share ``t``, so that each share holds about ``total / shares`` entries."""
    cut = empty_vector(shares + 1, np.int64)
    cut[0], cut[shares] = 0, count
    seen, t = 0, 1
    for a in range(count):
        while t < shares and seen >= total * t // shares:
            cut[t] = a
            t += 1
        seen += spans[a, 1] - spans[a, 0]
    while t < shares:
        cut[t] = count
        t += 1
    return cut


def scatter_kernel(shape, serial, threaded, indices=None):
    """``threaded`` for a matrix that can reach :data:`SCATTER_PARALLEL_MIN_ENTRIES` visited entries, else ``serial``.

    ``serial`` calls :func:`scatter_spans`, ``threaded``
    :func:`scatter_spans_threaded`. A matrix of ``shape`` with fewer
    entries, or (given ``indices``, the position of the kernel's index
    array) one that stores fewer, never reaches the split (each event row is
    visited once), so its handler does not compile it: that is most of the
    compile time, seconds per dtype signature.

    Example:
        >>> scatter_kernel((100, 100), 'S', 'T'), scatter_kernel((4000, 4000), 'S', 'T')
        ('S', 'T')
    """
    m, n = shape
    if m * n < SCATTER_PARALLEL_MIN_ENTRIES:
        return serial
    if indices is None:
        return _bound(threaded)
    return by_inputs(lambda *arrays: _bound(threaded) if arrays[indices].size >= SCATTER_PARALLEL_MIN_ENTRIES
                     else serial)


def _bound(threaded):
    """``threaded``, once the launch hooks it calls by symbol name are bound in this process.

    Only then: binding them compiles two small C functions (about a second in
    a fresh process), which a process that never splits a scatter skips.
    """
    threading_layer()
    return threaded


@numba.njit(cache=True)
def scatter_spans(data, indices, perm, spans, count, out, permuted):
    """out = 0, then out[indices[k]] += w(k) over the entries ``k`` in ``spans[:count]`` (``(start, end)`` rows).

    ``w(k)`` is ``data[0]`` when ``data`` has one entry, else ``data[perm[k]]``
    when ``permuted``, else ``data[k]``. Spans must lie within ``indices``
    (and ``perm``); columns outside ``[0, len(out))`` and ``perm`` entries
    outside ``data`` are dropped. Runs on the calling thread;
    :func:`scatter_spans_threaded` splits large calls.
    """
    _scatter_share(data, indices, perm, spans, 0, count, out, permuted, indices.shape[0] >= PREFETCH_MIN_ENTRIES)


@numba.njit(cache=True)
def scatter_spans_threaded(data, indices, perm, spans, count, out, permuted):
    """:func:`scatter_spans`, split over numba's threads from :data:`SCATTER_PARALLEL_MIN_ENTRIES` visited entries on.

    The same sums on every call (the split is fixed by the thread count).
    """
    ahead = indices.shape[0] >= PREFETCH_MIN_ENTRIES
    total = 0
    for a in range(count):
        total += spans[a, 1] - spans[a, 0]
    if _THREADS_ALLOWED and total >= SCATTER_PARALLEL_MIN_ENTRIES:
        shares = min(launch_begin(), total // (SCATTER_PARALLEL_MIN_ENTRIES // 2))
        if shares > 1:
            copies = np.empty((shares - 1, out.shape[0]), out.dtype)
            _scatter_threads(data, indices, perm, spans, _shares(spans, count, total, shares), out, copies,
                             permuted, ahead)
            launch_end()
            return
        launch_end()
    _scatter_share(data, indices, perm, spans, 0, count, out, permuted, ahead)
