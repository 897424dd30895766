"""Numba CPU kernels for the CSR operators.

Each kernel is ``kernel(data, indices, indptr, x, out, err)``: it fills
``out`` (the bridge hands it over uninitialised). Bad structure is dropped,
the same way on every backend: a row whose ``indptr`` range decreases or
leaves ``[0, len(indices)]`` is empty, and an entry whose column index lies
outside ``[0, n)`` contributes nothing; neither is ever read past or written
past. (The public functions check concrete structure before any kernel and
repair a traced ``indptr``, so these guards only keep memory safe.) ``err``
stays unused: the kernels never fail.

Binary kernels add the weights of the event entries (a select: a NaN weight
without an event adds nothing); float kernels add ``w * x`` over every
stored entry, zeros of ``x`` included, so ``NaN * 0`` is NaN as in IEEE.

Why the loops look the way they do (measured at m = n = 4000, 100
connections per row): ``transpose=False`` gathers row by row (no scatter
conflicts, one output write per row); ``transpose=True`` scatters from the
rows of ``x`` (for binary kernels only the rows with an event, so the
event-driven path costs events x connections per row). Events are turned
into a bool mask once, so the inner loops test one byte.
"""

from __future__ import annotations

import numba
import numpy as np

from eventjax.kernels.common.numba_events import event_mask

__all__ = ['binary_csrmm_kernel', 'binary_csrmv_kernel', 'csrmm_kernel', 'csrmv_kernel']


@numba.njit(cache=True, inline='always')
def _row_range(indptr, i, nnz):
    """Row ``i``'s entry range, empty when its ``indptr`` range is invalid."""
    start, end = indptr[i], indptr[i + 1]
    if 0 <= start and start <= end and end <= nnz:
        return start, end
    return 0, 0


@numba.njit(cache=True)
def _mv_gather(data, indices, indptr, v, out, err):
    """out[i] = sum_k data[k] * v[indices[k]] over row i."""
    nnz, n, homogeneous = indices.shape[0], v.shape[0], data.shape[0] == 1
    for i in range(out.shape[0]):
        start, end = _row_range(indptr, i, nnz)
        acc = out.dtype.type(0)
        for k in range(start, end):
            j = indices[k]
            if 0 <= j and j < n:
                acc += (data[0] if homogeneous else data[k]) * v[j]
        out[i] = acc


@numba.njit(cache=True)
def _binary_mv_gather(data, indices, indptr, spikes, out, err):
    """out[i] = sum of data[k] over row i where spikes[indices[k]] is an event."""
    nnz, n, homogeneous = indices.shape[0], spikes.shape[0], data.shape[0] == 1
    mask = event_mask(spikes)
    zero = out.dtype.type(0)
    for i in range(out.shape[0]):
        start, end = _row_range(indptr, i, nnz)
        acc = zero
        for k in range(start, end):
            j = indices[k]
            if 0 <= j and j < n and mask[j]:
                acc += data[0] if homogeneous else data[k]
        out[i] = acc


@numba.njit(cache=True)
def _scatter_rows(data, indices, indptr, x, out, binary):
    """out[indices[k], :] += data[k] * x[i, :] (binary: data[k] where x[i, :] is an event)."""
    nnz, n, homogeneous = indices.shape[0], out.shape[0], data.shape[0] == 1
    cols = x.shape[1]
    out[:] = 0
    mask = event_mask(x) if binary else np.zeros((0, 0), np.bool_)
    for i in range(x.shape[0]):
        if binary:
            active = False
            for c in range(cols):
                active |= mask[i, c]
            if not active:
                continue
        start, end = _row_range(indptr, i, nnz)
        for k in range(start, end):
            j = indices[k]
            if j < 0 or j >= n:
                continue
            w = data[0] if homogeneous else data[k]
            for c in range(cols):
                if binary:
                    if mask[i, c]:
                        out[j, c] += w
                else:
                    out[j, c] += w * x[i, c]


@numba.njit(cache=True)
def _mv_scatter(data, indices, indptr, v, out, err):
    _scatter_rows(data, indices, indptr, v.reshape(v.shape[0], 1), out.reshape(out.shape[0], 1), False)


@numba.njit(cache=True)
def _binary_mv_scatter(data, indices, indptr, spikes, out, err):
    """The event-driven path: only rows with an event are visited."""
    nnz, n, homogeneous = indices.shape[0], out.shape[0], data.shape[0] == 1
    out[:] = 0
    for i in range(spikes.shape[0]):
        if not spikes[i] > 0:
            continue
        start, end = _row_range(indptr, i, nnz)
        for k in range(start, end):
            j = indices[k]
            if 0 <= j and j < n:
                out[j] += data[0] if homogeneous else data[k]


@numba.njit(cache=True)
def _mm_gather(data, indices, indptr, B, out, err):
    """out[i, :] = sum_k data[k] * B[indices[k], :] (contiguous inner loop over B's columns)."""
    nnz, n, homogeneous = indices.shape[0], B.shape[0], data.shape[0] == 1
    out[:] = 0
    for i in range(out.shape[0]):
        start, end = _row_range(indptr, i, nnz)
        for k in range(start, end):
            j = indices[k]
            if j < 0 or j >= n:
                continue
            w = data[0] if homogeneous else data[k]
            for c in range(B.shape[1]):
                out[i, c] += w * B[j, c]


@numba.njit(cache=True)
def _binary_csrmm_gather(data, indices, indptr, B, out, err):
    """out[i, c] = sum of data[k] over row i where B[indices[k], c] is an event."""
    nnz, n, homogeneous = indices.shape[0], B.shape[0], data.shape[0] == 1
    mask = event_mask(B)
    out[:] = 0
    for i in range(out.shape[0]):
        start, end = _row_range(indptr, i, nnz)
        for k in range(start, end):
            j = indices[k]
            if j < 0 or j >= n:
                continue
            w = data[0] if homogeneous else data[k]
            for c in range(B.shape[1]):
                if mask[j, c]:
                    out[i, c] += w


@numba.njit(cache=True)
def _csrmm_scatter(data, indices, indptr, B, out, err):
    _scatter_rows(data, indices, indptr, B, out, False)


@numba.njit(cache=True)
def _binary_csrmm_scatter(data, indices, indptr, B, out, err):
    _scatter_rows(data, indices, indptr, B, out, True)


def csrmv_kernel(*, transpose):
    """The kernel for ``csrmv``."""
    return _mv_scatter if transpose else _mv_gather


def binary_csrmv_kernel(*, transpose):
    """The kernel for ``binary_csrmv``."""
    return _binary_mv_scatter if transpose else _binary_mv_gather


def csrmm_kernel(*, transpose):
    """The kernel for ``csrmm``."""
    return _csrmm_scatter if transpose else _mm_gather


def binary_csrmm_kernel(*, transpose):
    """The kernel for ``binary_csrmm``."""
    return _binary_csrmm_scatter if transpose else _binary_csrmm_gather
