"""Numba CPU kernels of the index-list products: ``kernel(data, indices, indptr, perm, ids, count, out, err)``.

The kernel scatters from the listed rows only: the work is the events
times their row lengths, and nothing of length ``m`` is read (``out``, of
length ``n``, is zeroed, as every scatter must). Rows are read with bounds
clipped to the stored entries, columns outside ``[0, n)``, list entries
outside the event side and permutation entries outside ``data`` are
dropped: no read or write is ever out of bounds, and ``err`` stays unused.
"""

from __future__ import annotations

import numba
import numpy as np

from eventjax.kernels.common.numba_events import FASTMATH

__all__ = ['binary_csrmv_indexed_kernel']


@numba.njit(cache=True, inline='always')
def _bounds(indptr, i, nnz):
    start = min(max(np.int64(indptr[i]), 0), nnz)
    return start, min(max(np.int64(indptr[i + 1]), start), nnz)


@numba.njit(cache=True, inline='always')
def _weight(data, perm, k, permuted):
    """The weight of entry ``k`` and whether it exists (a permutation entry may point outside ``data``)."""
    if data.shape[0] == 1:
        return data[0], True
    p = np.int64(perm[k]) if permuted else np.int64(k)
    if p < 0 or p >= data.shape[0]:
        return data[0], False
    return data[p], True


@numba.njit(cache=True, fastmath=FASTMATH, inline='always')
def _scatter_rows(data, indices, indptr, perm, ids, count, out, permuted):
    """out[indices[k]] += w(k) over the entries of each listed row."""
    out[:] = 0
    nnz, m, n = np.int64(indices.shape[0]), np.int64(indptr.shape[0] - 1), np.int64(out.shape[0])
    live = min(max(np.int64(count[0]), 0), ids.shape[0])
    for s in range(live):
        i = np.int64(ids[s])
        if i < 0 or i >= m:
            continue
        start, end = _bounds(indptr, i, nnz)
        for k in range(start, end):
            j = np.int64(indices[k])
            if j >= 0 and j < n:
                w, ok = _weight(data, perm, k, permuted)
                if ok:
                    out[j] += w


def binary_csrmv_indexed_kernel(permuted):
    """The numba kernel: a scatter from the listed rows (weights through ``perm`` when ``permuted``)."""
    return _scatter_permuted if permuted else _scatter


@numba.njit(cache=True, fastmath=FASTMATH)
def _scatter(data, indices, indptr, perm, ids, count, out, err):
    _scatter_rows(data, indices, indptr, perm, ids, count, out, False)


@numba.njit(cache=True, fastmath=FASTMATH)
def _scatter_permuted(data, indices, indptr, perm, ids, count, out, err):
    _scatter_rows(data, indices, indptr, perm, ids, count, out, True)
