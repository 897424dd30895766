"""Numba CPU kernels of the per-synapse products: ``kernel(*inputs, out, err)`` fills ``out``.

``indptr`` arrives repaired (monotone, inside ``[0, nnz]``); entries outside
``[indptr[0], indptr[m])`` belong to no row and get 0, as does an entry
whose column lies outside ``[0, n)``; nothing is read or written out of
bounds and ``err`` stays unused. With an event ``y`` (bool) and
``transpose=False`` a row without an event is only zeroed: its weights are
never read, so the work beyond the output's own write is the rows of the
events times their length.
"""

from __future__ import annotations

import numba
import numpy as np

from eventjax.kernels.common.numba.events import FASTMATH

__all__ = ['csr_dt2t_kernel', 'csr_sddmm_kernel']

_U = np.uint64


@numba.njit(cache=True, inline='always')
def _zero_outside_rows(out, indptr):
    nnz = out.shape[1]
    first, last = np.int64(indptr[0]), np.int64(indptr[indptr.shape[0] - 1])
    for b in range(out.shape[0]):
        for k in range(0, first):
            out[b, k] = 0
        for k in range(last, nnz):
            out[b, k] = 0


@numba.njit(cache=True, fastmath=FASTMATH)
def _by_row(w, indices, indptr, y, out, err):
    _zero_outside_rows(out, indptr)
    for b in range(out.shape[0]):
        for i in range(indptr.shape[0] - 1):
            yi = y[b, i]
            for k in range(np.int64(indptr[i]), np.int64(indptr[i + 1])):
                out[b, k] = w[b, k] * yi


@numba.njit(cache=True)
def _by_event_row(w, indices, indptr, y, out, err):
    _zero_outside_rows(out, indptr)
    for b in range(out.shape[0]):
        for i in range(indptr.shape[0] - 1):
            start, end = np.int64(indptr[i]), np.int64(indptr[i + 1])
            if y[b, i]:
                out[b, start:end] = w[b, start:end]
            else:
                out[b, start:end] = 0


@numba.njit(cache=True, inline='always')
def _by_column_loop(w, indices, indptr, y, out, events):
    _zero_outside_rows(out, indptr)
    n = _U(y.shape[1])
    start, end = np.int64(indptr[0]), np.int64(indptr[indptr.shape[0] - 1])
    for b in range(out.shape[0]):
        for k in range(start, end):
            j = _U(np.int64(indices[k]))
            if j >= n:
                out[b, k] = 0
            elif events:
                out[b, k] = w[b, k] if y[b, j] else 0
            else:
                out[b, k] = w[b, k] * y[b, j]


@numba.njit(cache=True, fastmath=FASTMATH)
def _by_column(w, indices, indptr, y, out, err):
    _by_column_loop(w, indices, indptr, y, out, False)


@numba.njit(cache=True)
def _by_event_column(w, indices, indptr, y, out, err):
    _by_column_loop(w, indices, indptr, y, out, True)


def csr_dt2t_kernel(*, transpose, events):
    """The numba kernel of ``csr_dt2t``: ``y`` read by row (by column when ``transpose``)."""
    if transpose:
        return _by_event_column if events else _by_column
    return _by_event_row if events else _by_row


@numba.njit(cache=True, fastmath=FASTMATH)
def _sddmm(a, bt, indices, indptr, out, err):
    nnz = out.shape[0]
    first, last = np.int64(indptr[0]), np.int64(indptr[indptr.shape[0] - 1])
    out[:first] = 0
    out[last:] = 0
    n, depth = _U(bt.shape[0]), a.shape[1]
    for i in range(indptr.shape[0] - 1):
        for k in range(np.int64(indptr[i]), min(np.int64(indptr[i + 1]), nnz)):
            j = _U(np.int64(indices[k]))
            total = 0.0  # float64: float16 and float32 dot products lose nothing in the sum
            if j < n:
                for t in range(depth):
                    total += np.float64(a[i, t]) * np.float64(bt[j, t])
            out[k] = total


def csr_sddmm_kernel():
    """The numba kernel of ``csr_sddmm``: row by row, one dot product per stored entry."""
    return _sddmm
