"""Numba CPU kernels of the index-list products: ``kernel(data, indices, indptr, perm, ids, count, out, err)``.

The kernel scatters from the listed rows only: the work is the events
times their row lengths, and nothing of length ``m`` is read (``out``, of
length ``n``, is zeroed, as every scatter must). Rows are read with bounds
clipped to the stored entries, columns outside ``[0, n)``, list entries
outside the event side and permutation entries outside ``data`` are
dropped: no read or write is ever out of bounds, and ``err`` stays unused.
A list whose ``count`` exceeds its length (an overflow) gives NaN everywhere.
"""

from __future__ import annotations

import numba
import numpy as np

from eventjax.backends.numba import empty_vector
from eventjax.kernels.common.numba.events import FASTMATH, event_columns
from eventjax.kernels.common.numba.scatter import packed_rows, scatter_kernel, scatter_spans, scatter_spans_threaded

_U = np.uint64

__all__ = ['binary_csrmm_indexed_kernel', 'binary_csrmv_indexed_kernel', 'binary_csrmv_packed_kernel',
           'csr_slice_rows_kernel']


@numba.njit(cache=True, inline='always')
def _bounds(indptr, i, nnz):
    start = min(max(np.int64(indptr[i]), 0), nnz)
    return start, min(max(np.int64(indptr[i + 1]), start), nnz)


@numba.njit(cache=True, inline='always')
def _scatter_rows(scatter, data, indices, indptr, perm, ids, count, out, permuted):
    """out[indices[k]] += w(k) over the entries of each listed row, by ``scatter`` (of ``numba.scatter``)."""
    if count[0] > ids.shape[0]:
        out[:] = np.nan  # an overflowed list: NaN everywhere, never a silent drop
        return
    nnz, m = np.int64(indices.shape[0]), _U(indptr.shape[0] - 1)
    live = min(max(np.int64(count[0]), 0), ids.shape[0])
    spans = np.empty((live, 2), np.int64)
    rows = 0
    for s in range(live):
        i = _U(np.int64(ids[s]))
        if i < m:
            spans[rows, 0], spans[rows, 1] = _bounds(indptr, np.int64(i), nnz)
            rows += 1
    scatter(data, indices, perm, spans, rows, out, permuted)


def binary_csrmv_indexed_kernel(shape, permuted):
    """The numba kernel: a scatter from the listed rows (weights through ``perm`` when ``permuted``).

    Only a matrix that stores ``numba.scatter.SCATTER_PARALLEL_MIN_ENTRIES``
    entries gets the scatter that splits large calls over threads.
    """
    if permuted:
        return scatter_kernel(shape, _scatter_permuted, _scatter_permuted_threaded, indices=1)
    return scatter_kernel(shape, _scatter, _scatter_threaded, indices=1)


def _scatter_entry(scatter, permuted):
    """The kernel of one ``scatter`` of ``numba.scatter`` and one weight reading (through ``perm`` or not)."""
    @numba.njit(cache=True)
    def kernel(data, indices, indptr, perm, ids, count, out, err):
        _scatter_rows(scatter, data, indices, indptr, perm, ids, count, out, permuted)
    return kernel


_scatter, _scatter_permuted = _scatter_entry(scatter_spans, False), _scatter_entry(scatter_spans, True)
_scatter_threaded = _scatter_entry(scatter_spans_threaded, False)
_scatter_permuted_threaded = _scatter_entry(scatter_spans_threaded, True)


@numba.njit(cache=True, fastmath=FASTMATH, inline='always')
def _scatter_rows_mm(data, indices, indptr, perm, ids, count, B, out, permuted):
    """out[indices[k], c] += w(k) over the entries of each listed row ``i`` and its event columns ``c`` of ``B``."""
    if count[0] > ids.shape[0]:
        out[:] = np.nan  # an overflowed list: NaN everywhere
        return
    out[:] = 0
    nnz, m, n, nd = np.int64(indices.shape[0]), _U(indptr.shape[0] - 1), _U(out.shape[0]), _U(data.shape[0])
    live = min(max(np.int64(count[0]), 0), ids.shape[0])
    active = empty_vector(B.shape[1], np.int64)
    for s in range(live):
        i = _U(np.int64(ids[s]))
        if i >= m:
            continue
        hits = event_columns(B, np.int64(i), active)
        if hits == 0:
            continue
        start, end = _bounds(indptr, np.int64(i), nnz)
        for k in range(start, end):
            j = _U(np.int64(indices[k]))
            p = _U(0) if nd == 1 else (_U(np.int64(perm[k])) if permuted else _U(k))
            if j < n and p < nd:
                w = data[p]
                for a in range(hits):
                    out[j, active[a]] += w


def binary_csrmm_indexed_kernel(permuted):
    """The numba matrix kernel: a scatter from the listed rows into their event columns."""
    return _scatter_mm_permuted if permuted else _scatter_mm


@numba.njit(cache=True, fastmath=FASTMATH)
def _scatter_mm(data, indices, indptr, perm, ids, count, B, out, err):
    _scatter_rows_mm(data, indices, indptr, perm, ids, count, B, out, False)


@numba.njit(cache=True, fastmath=FASTMATH)
def _scatter_mm_permuted(data, indices, indptr, perm, ids, count, B, out, err):
    _scatter_rows_mm(data, indices, indptr, perm, ids, count, B, out, True)


@numba.njit(cache=True, fastmath=FASTMATH)
def _slice_rows(data, indices, indptr, rows, out, err):
    """out[s, indices[k]] += w(k) over the entries of row rows[s]; rows outside [0, m) stay zero."""
    out[:] = 0
    nnz, m, n = np.int64(indices.shape[0]), _U(indptr.shape[0] - 1), _U(out.shape[1])
    for s in range(rows.shape[0]):
        i = _U(np.int64(rows[s]))
        if i >= m:
            continue
        start, end = _bounds(indptr, np.int64(i), nnz)
        for k in range(start, end):
            j = _U(np.int64(indices[k]))
            if j < n:
                out[s, j] += data[0] if data.shape[0] == 1 else data[k]


def csr_slice_rows_kernel():
    """The numba kernel of ``csr_slice_rows``."""
    return _slice_rows


@numba.njit(cache=True, inline='always')
def _packed_bounds(indptr, sizes, i, nnz):
    """Entries of row ``i``: from ``indptr``, or ``[i k, (i + 1) k)`` for a FCN matrix (``sizes[2] = k > 0``)."""
    k = np.int64(sizes[2])
    if k > 0:
        return min(i * k, nnz), min(i * k + k, nnz)
    return _bounds(indptr, i, nnz)


@numba.njit(cache=True, inline='always')
def _packed_scatter_rows(scatter, data, indices, indptr, words, sizes, out):
    """out[indices[e]] += w(e) over the rows of the set bits, by ``scatter``; a word without events costs one test."""
    m, nnz = np.int64(sizes[0]), np.int64(indices.shape[0])
    rows = empty_vector(min(m, words.shape[0] * 32), np.int64)
    count = packed_rows(words, m, rows)
    spans = np.empty((count, 2), np.int64)
    for a in range(count):
        spans[a, 0], spans[a, 1] = _packed_bounds(indptr, sizes, rows[a], nnz)
    scatter(data, indices, indices, spans, count, out, False)  # no permutation: perm is not read


@numba.njit(cache=True)
def _packed_scatter(data, indices, indptr, words, sizes, out, err):
    _packed_scatter_rows(scatter_spans, data, indices, indptr, words, sizes, out)


@numba.njit(cache=True)
def _packed_scatter_threaded(data, indices, indptr, words, sizes, out, err):
    _packed_scatter_rows(scatter_spans_threaded, data, indices, indptr, words, sizes, out)


@numba.njit(cache=True, fastmath=FASTMATH)
def _packed_gather(data, indices, indptr, words, sizes, out, err):
    """out[r] = sum of w(e) over the entries of row r whose column's bit is set."""
    n, nnz = _U(np.int64(sizes[1])), np.int64(indices.shape[0])
    zero = out.dtype.type(0)
    for r in range(out.shape[0]):
        start, end = _packed_bounds(indptr, sizes, np.int64(r), nnz)
        acc = zero
        for e in range(start, end):
            j = _U(np.int64(indices[e]))
            if j < n and (np.uint64(words[j >> _U(5)]) >> (j & _U(31))) & _U(1):
                acc += data[0] if data.shape[0] == 1 else data[e]
        out[r] = acc


def binary_csrmv_packed_kernel(shape, fixed, transpose):
    """The numba kernel of the bit-packed product: a scatter over set bits, or a gather testing bits.

    The scatter splits large calls over threads only for a matrix that can
    hold ``numba.scatter.SCATTER_PARALLEL_MIN_ENTRIES`` entries (``m * k``
    for a FCN matrix).
    """
    if not transpose:
        return _packed_gather
    m, n = shape
    return scatter_kernel((m, fixed or n), _packed_scatter, _packed_scatter_threaded)
