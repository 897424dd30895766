"""Numba CPU kernels for the FCN operators.

Each kernel is ``kernel(weights, indices, x, out, err)``: ``weights`` is
``(m, k)`` or ``(1, 1)`` (homogeneous), ``indices`` is ``(m, k)``. It fills
``out`` (not zeroed by the bridge). A connection whose index lies outside
``[0, n)`` is dropped, the same way on every backend: never read or
written, it contributes nothing. (The public functions check concrete
indices before any kernel, so this guard only keeps memory safe.) ``err``
stays unused: the kernels never fail.

Binary kernels add the weights of the event connections (a select: a NaN
weight without an event adds nothing); float kernels add ``w * x`` over
every stored connection, zeros of ``x`` included, so ``NaN * 0`` is NaN.

Why the loops look the way they do (measured at m = n = 4000, k = 100):
weights and indices are read as flat vectors, row ``i`` at ``[i * k, i * k
+ k)``, a shared weight as the only entry. ``transpose=False`` gathers row by
row (one output write per row) with the branchless, vectorizable row sums of
``common.numba.events``; ``transpose=True`` scatters from the rows of ``x``
(for binary kernels only the rows with an event, so the event-driven path
costs events x ``k``). Indices are read unsigned, so one compare drops a bad
one. From ``numba.events.PARALLEL_MIN_WORK`` visited entries on, the gathers
run their rows on numba's threads (no two threads write one row); the scatters
stay serial, and past the last-level cache (``PREFETCH_MIN_ENTRIES``) the
binary vector one prefetches event rows.
"""

from __future__ import annotations

import numba
import numpy as np

from eventjax.backends.numba import by_inputs
from eventjax.kernels.common.numba.events import (
    FASTMATH,
    PREFETCH_MIN_ENTRIES,
    ROWS_AHEAD,
    binary_row_sum,
    by_direction,
    event_flags,
    event_indices,
    float_row_sum,
    prefetch_entries,
    row_has_event,
    row_plus_entry,
    serial_and_parallel,
)

__all__ = ['binary_fcnmm_kernel', 'binary_fcnmv_kernel', 'fcnmm_kernel', 'fcnmv_kernel']

_U = np.uint64


# --- transpose=False: gathers, one output row per row of indices ------------------------


def _mv_gather(weights, indices, v, out, err):
    """out[i] = sum_j w[i, j] * v[indices[i, j]]."""
    w, ind, k, n, zero = weights.reshape(weights.size), indices.reshape(indices.size), indices.shape[1], \
        _U(v.shape[0]), out.dtype.type(0)
    for i in numba.prange(out.shape[0]):
        out[i] = float_row_sum(w, ind, _U(i * k), _U(i * k + k), v, n, zero) if n > 0 else zero


def _binary_mv_gather(weights, indices, spikes, out, err):
    """out[i] = sum of w[i, j] over the connections whose target spikes[indices[i, j]] is an event."""
    w, ind, k, zero = weights.reshape(weights.size), indices.reshape(indices.size), indices.shape[1], \
        out.dtype.type(0)
    flags = event_flags(spikes)
    for i in numba.prange(out.shape[0]):
        out[i] = binary_row_sum(w, ind, _U(i * k), _U(i * k + k), flags, zero)


@numba.njit(cache=True, inline='always')
def _connection(w, indices, i, j, k):
    """Connection ``(i, j)``'s target, read unsigned (one compare drops a bad one), and its weight."""
    return _U(np.int64(indices[i, j])), w[0] if w.shape[0] == 1 else w[i * k + j]


@numba.njit(cache=True, fastmath=FASTMATH, inline='always')
def _mm_gather_row(weights, indices, B, out, i, binary):
    """Row i of the gather: out[i, :] += w * B[c, :] (binary: w where B[c, :] is an event)."""
    w, n, zero = weights.reshape(weights.size), _U(B.shape[0]), out.dtype.type(0)
    k = indices.shape[1]
    for col in range(out.shape[1]):
        out[i, col] = zero
    for j in range(k):
        c, wij = _connection(w, indices, i, j, k)
        if c < n:
            row_plus_entry(out, i, B, c, wij, binary)


def _mm_gather(weights, indices, B, out, err):
    """out[i, :] = sum_j w[i, j] * B[indices[i, j], :] (contiguous inner loop)."""
    for i in numba.prange(out.shape[0]):
        _mm_gather_row(weights, indices, B, out, i, False)


def _binary_mm_gather(weights, indices, B, out, err):
    """out[i, col] = sum of w[i, j] over connections whose B[indices[i, j], col] is an event."""
    for i in numba.prange(out.shape[0]):
        _mm_gather_row(weights, indices, B, out, i, True)


# Each gather serial and on numba's threads, by_direction picks one per matrix.
_mv_gather, _mv_gather_parallel = serial_and_parallel(_mv_gather)
_binary_mv_gather, _binary_mv_gather_parallel = serial_and_parallel(_binary_mv_gather)
_mm_gather, _mm_gather_parallel = serial_and_parallel(_mm_gather)
_binary_mm_gather, _binary_mm_gather_parallel = serial_and_parallel(_binary_mm_gather)


# --- transpose=True: scatters from the rows of x ------------------------------------


@numba.njit(cache=True, fastmath=FASTMATH)
def _mv_scatter(weights, indices, v, out, err):
    """out[indices[i, j]] += w[i, j] * v[i] for every row (zeros of v included)."""
    w, m, k, n = weights.reshape(weights.size), indices.shape[0], indices.shape[1], _U(out.shape[0])
    out[:] = 0
    for i in range(m):
        vi = v[i]
        for j in range(k):
            c = _U(np.int64(indices[i, j]))
            if c < n:
                out[c] += (w[0] if w.shape[0] == 1 else w[i * k + j]) * vi


@numba.njit(cache=True, inline='always')
def _scatter_row(w, indices, i, out):
    """out[indices[i, j]] += the weight of (i, j) (w[0] when it has one entry), columns outside [0, n) dropped."""
    k, n = indices.shape[1], _U(out.shape[0])
    if w.shape[0] == 1:
        wi = w[0]
        for j in range(k):
            c = _U(np.int64(indices[i, j]))
            if c < n:
                out[c] += wi
    else:
        for j in range(k):
            c = _U(np.int64(indices[i, j]))
            if c < n:
                out[c] += w[i * k + j]


@numba.njit(cache=True)
def _binary_mv_scatter(weights, indices, spikes, out, err):
    """The event-driven path: only the rows with an event are visited."""
    w = weights.reshape(weights.size)
    out[:] = 0
    for i in range(indices.shape[0]):
        if spikes[i] > 0:
            _scatter_row(w, indices, i, out)


@numba.njit(cache=True)
def _binary_mv_scatter_prefetching(weights, indices, spikes, out, err):
    """The event-driven path past the last-level cache: the rows ``ROWS_AHEAD`` events ahead are prefetched."""
    w, k = weights.reshape(weights.size), indices.shape[1]
    out[:] = 0
    flat = indices.reshape(indices.size)
    rows = event_indices(spikes[:indices.shape[0]])
    for a in range(rows.shape[0]):
        if a + ROWS_AHEAD < rows.shape[0]:
            lo = rows[a + ROWS_AHEAD] * k
            prefetch_entries(flat, lo, lo + k)
            if w.shape[0] > 1:
                prefetch_entries(w, lo, lo + k)
        _scatter_row(w, indices, rows[a], out)


@numba.njit(cache=True, fastmath=FASTMATH)
def _scatter_rows(weights, indices, B, out, binary):
    """out[indices[i, j], :] += w[i, j] * B[i, :] (binary: w[i, j] where B[i, :] is an event; other rows skipped)."""
    w, m, k, n = weights.reshape(weights.size), indices.shape[0], indices.shape[1], _U(out.shape[0])
    out[:] = 0
    for i in range(m):
        if binary and not row_has_event(B, i):
            continue
        if binary:
            # One column at a time: a row's few events cost a pass each, not a select per column.
            for col in range(B.shape[1]):
                if not B[i, col] > 0:
                    continue
                for j in range(k):
                    c = _U(np.int64(indices[i, j]))
                    if c < n:
                        out[c, col] += w[0] if w.shape[0] == 1 else w[i * k + j]
            continue
        for j in range(k):
            c, wij = _connection(w, indices, i, j, k)
            if c >= n:
                continue
            for col in range(B.shape[1]):
                out[c, col] += wij * B[i, col]


@numba.njit(cache=True)
def _mm_scatter(weights, indices, B, out, err):
    """out[indices[i, j], :] += w[i, j] * B[i, :]."""
    _scatter_rows(weights, indices, B, out, False)


@numba.njit(cache=True)
def _binary_mm_scatter(weights, indices, B, out, err):
    """Event-driven: rows of B without an event are skipped."""
    _scatter_rows(weights, indices, B, out, True)


fcnmv_kernel = by_direction('fcnmv', _mv_scatter, _mv_gather, _mv_gather_parallel)
# Transposed: the prefetching scatter only for a matrix that stores enough entries to need it, so a first
# call on a smaller one compiles the plain scatter alone (the event-row list and the prefetches are a
# compile of their own).
binary_fcnmv_kernel = by_direction(
    'binary_fcnmv',
    by_inputs(lambda weights, indices, *rest: _binary_mv_scatter_prefetching
              if indices.size >= PREFETCH_MIN_ENTRIES else _binary_mv_scatter),
    _binary_mv_gather, _binary_mv_gather_parallel)
fcnmm_kernel = by_direction('fcnmm', _mm_scatter, _mm_gather, _mm_gather_parallel)
binary_fcnmm_kernel = by_direction('binary_fcnmm', _binary_mm_scatter, _binary_mm_gather, _binary_mm_gather_parallel)
