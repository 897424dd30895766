"""Numba CPU kernels for the CSR operators.

Each kernel is ``kernel(data, indices, indptr, x, out, err)``: it fills
``out`` (the bridge hands it over uninitialised). Bad structure is dropped,
the same way on every backend: ``indptr`` goes through :func:`trusted_indptr`
(the repair the other backends get in JAX before their kernel), and an
entry whose column index lies outside ``[0, n)`` contributes nothing;
neither is ever read past or written past. ``err`` stays unused: the kernels never fail.

Binary kernels add the weights of the event entries (a select: a NaN weight
without an event adds nothing); float kernels add ``w * x`` over every
stored entry, zeros of ``x`` included, so ``NaN * 0`` is NaN as in IEEE.

How the loops are shaped, and where threads and prefetching start: the
"numba kernels" section of the CSR kernels page in the docs.
"""

from __future__ import annotations

import numba
import numpy as np

from eventjax.backends.numba import empty_vector
from eventjax.kernels.common.numba.events import (
    FASTMATH,
    binary_row_sum,
    by_direction,
    event_flags,
    float_row_sum,
    row_has_event,
    row_plus_entry,
    serial_and_parallel,
    trusted_indptr,
)
from eventjax.kernels.common.numba.scatter import event_rows, scatter_entries, scatter_kernel, scatter_spans_threaded

__all__ = ['binary_csrmm_kernel', 'binary_csrmv_kernel', 'csrmm_kernel', 'csrmv_kernel', 'trusted_indptr']

_U = np.uint64


@numba.njit(cache=True, inline='always')
def _row_range(indptr, i, nnz):
    """Row ``i``'s entry range as unsigned bounds (``indptr`` went through :func:`trusted_indptr`)."""
    return _U(np.int64(indptr[i])), _U(np.int64(indptr[i + 1]))


# --- transpose=False: gathers, one output row per CSR row ---------------------------


def _mv_gather(data, indices, indptr, v, out, err):
    """out[i] = sum_k data[k] * v[indices[k]] over row i."""
    indptr = trusted_indptr(indptr, indices.shape[0])
    nnz, n, zero = indices.shape[0], _U(v.shape[0]), out.dtype.type(0)
    for i in numba.prange(out.shape[0]):
        start, end = _row_range(indptr, i, nnz)
        out[i] = float_row_sum(data, indices, start, end, v, n, zero) if n > 0 else zero


def _binary_mv_gather(data, indices, indptr, spikes, out, err):
    """out[i] = sum of data[k] over row i where spikes[indices[k]] is an event."""
    indptr = trusted_indptr(indptr, indices.shape[0])
    nnz, flags, zero = indices.shape[0], event_flags(spikes), out.dtype.type(0)
    for i in numba.prange(out.shape[0]):
        start, end = _row_range(indptr, i, nnz)
        out[i] = binary_row_sum(data, indices, start, end, flags, zero)


@numba.njit(cache=True, inline='always')
def _entry(data, indices, k):
    """Stored entry ``k``'s column, read unsigned (one compare drops a bad one), and its weight."""
    return _U(np.int64(indices[k])), data[0] if data.shape[0] == 1 else data[k]


@numba.njit(cache=True, fastmath=FASTMATH, inline='always')
def _mm_gather_row(data, indices, indptr, B, out, i, binary):
    """Row i of the gather: out[i, :] += w * B[j, :] (binary: w where B[j, :] is an event)."""
    nnz, n, zero = indices.shape[0], _U(B.shape[0]), out.dtype.type(0)
    start, end = _row_range(indptr, i, nnz)
    for c in range(out.shape[1]):
        out[i, c] = zero
    for k in range(start, end):
        j, w = _entry(data, indices, k)
        if j < n:
            row_plus_entry(out, i, B, j, w, binary)


def _mm_gather(data, indices, indptr, B, out, err):
    """out[i, :] = sum_k data[k] * B[indices[k], :] (contiguous inner loop over B's columns)."""
    indptr = trusted_indptr(indptr, indices.shape[0])
    for i in numba.prange(out.shape[0]):
        _mm_gather_row(data, indices, indptr, B, out, i, False)


def _binary_mm_gather(data, indices, indptr, B, out, err):
    """out[i, c] = sum of data[k] over row i where B[indices[k], c] is an event."""
    indptr = trusted_indptr(indptr, indices.shape[0])
    for i in numba.prange(out.shape[0]):
        _mm_gather_row(data, indices, indptr, B, out, i, True)


# Each gather serial and on numba's threads, by_direction picks one per matrix.
_mv_gather, _mv_gather_parallel = serial_and_parallel(_mv_gather)
_binary_mv_gather, _binary_mv_gather_parallel = serial_and_parallel(_binary_mv_gather)
_mm_gather, _mm_gather_parallel = serial_and_parallel(_mm_gather)
_binary_mm_gather, _binary_mm_gather_parallel = serial_and_parallel(_binary_mm_gather)


# --- transpose=True: scatters from the rows of x ------------------------------------


@numba.njit(cache=True, fastmath=FASTMATH)
def _mv_scatter(data, indices, indptr, v, out, err):
    """out[indices[k]] += data[k] * v[i] over every row i (zeros of v included)."""
    indptr = trusted_indptr(indptr, indices.shape[0])
    nnz, n = indices.shape[0], _U(out.shape[0])
    out[:] = 0
    for i in range(v.shape[0]):
        start, end = _row_range(indptr, i, nnz)
        vi = v[i]
        for k in range(start, end):
            j = _U(np.int64(indices[k]))
            if j < n:
                out[j] += (data[0] if data.shape[0] == 1 else data[k]) * vi


@numba.njit(cache=True)
def _event_rows(spikes, indptr):
    """The rows with an event and their ``(start, end)`` spans (``indptr`` went through :func:`trusted_indptr`)."""
    rows = empty_vector(spikes.shape[0], np.int64)
    count = event_rows(spikes, rows)
    spans = np.empty((count, 2), np.int64)
    for a in range(count):
        spans[a, 0], spans[a, 1] = np.int64(indptr[rows[a]]), np.int64(indptr[rows[a] + 1])
    return spans, count


# The first kernel most programs call (the event product onto the targets) inlines its two
# helpers: as functions of their own they were two more numba compiles of a fresh process's
# first call (0.3 and 0.4 s). Only here: inlined into every kernel, a test run that compiles
# hundreds of kernels spent more typing them again than it saved.
_trusted_indptr_inlined = numba.njit(inline='always')(trusted_indptr.py_func)
_event_rows_inlined = numba.njit(inline='always')(event_rows.py_func)


@numba.njit(cache=True)
def _binary_mv_scatter(data, indices, indptr, spikes, out, err):
    """The event-driven path on the calling thread: only the rows with an event are visited.

    Written out in one function, not through ``numba.scatter``'s span
    scatter as the threaded variant is: the serial kernel is what a first
    call compiles, and each function numba compiles costs a first call a
    compile of its own. The loop over a row's entries is the span scatter's
    (``scatter_entries``), so the sums are the same. ``scatter_kernel`` gives
    it only matrices that store fewer than ``SCATTER_PARALLEL_MIN_ENTRIES``
    entries, which fit the last-level cache, so it has no prefetching path.
    """
    nnz = indices.shape[0]
    indptr = _trusted_indptr_inlined(indptr, nnz)
    rows = empty_vector(spikes.shape[0], np.int64)
    count = _event_rows_inlined(spikes, rows)
    out[:] = 0
    for a in range(count):
        start, end = _row_range(indptr, rows[a], nnz)
        scatter_entries(data, indices, start, end, out)


@numba.njit(cache=True)
def _binary_mv_scatter_threaded(data, indices, indptr, spikes, out, err):
    spans, count = _event_rows(spikes, trusted_indptr(indptr, indices.shape[0]))
    scatter_spans_threaded(data, indices, indices, spans, count, out, False)  # no permutation: perm is not read


@numba.njit(cache=True, fastmath=FASTMATH)
def _scatter_rows(data, indices, indptr, x, out, binary):
    """out[indices[k], :] += data[k] * x[i, :] (binary: data[k] where x[i, :] is an event, rows without one skipped)."""
    nnz, n = indices.shape[0], _U(out.shape[0])
    out[:] = 0
    for i in range(x.shape[0]):
        if binary and not row_has_event(x, i):
            continue
        start, end = _row_range(indptr, i, nnz)
        if binary:
            # One column at a time: a row's few events cost a pass each, not a select per column.
            for c in range(x.shape[1]):
                if not x[i, c] > 0:
                    continue
                for k in range(start, end):
                    j = _U(np.int64(indices[k]))
                    if j < n:
                        out[j, c] += data[0] if data.shape[0] == 1 else data[k]
            continue
        for k in range(start, end):
            j, w = _entry(data, indices, k)
            if j >= n:
                continue
            for c in range(x.shape[1]):
                out[j, c] += w * x[i, c]


@numba.njit(cache=True)
def _csrmm_scatter(data, indices, indptr, B, out, err):
    indptr = trusted_indptr(indptr, indices.shape[0])
    _scatter_rows(data, indices, indptr, B, out, False)


@numba.njit(cache=True)
def _binary_csrmm_scatter(data, indices, indptr, B, out, err):
    indptr = trusted_indptr(indptr, indices.shape[0])
    _scatter_rows(data, indices, indptr, B, out, True)


csrmv_kernel = by_direction('csrmv', _mv_scatter, _mv_gather, _mv_gather_parallel)
_binary_csrmv_kernel = by_direction('binary_csrmv', _binary_mv_scatter, _binary_mv_gather,
                                    _binary_mv_gather_parallel)


def binary_csrmv_kernel(*, transpose, shape, outs):
    """The kernel for ``binary_csrmv``: a scatter on numba's threads only for a matrix that stores enough entries."""
    if transpose:
        return scatter_kernel(shape, _binary_mv_scatter, _binary_mv_scatter_threaded, indices=1)
    return _binary_csrmv_kernel(transpose=transpose, shape=shape, outs=outs)
csrmm_kernel = by_direction('csrmm', _csrmm_scatter, _mm_gather, _mm_gather_parallel)
binary_csrmm_kernel = by_direction('binary_csrmm', _binary_csrmm_scatter, _binary_mm_gather, _binary_mm_gather_parallel)
