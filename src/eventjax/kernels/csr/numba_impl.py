"""Numba CPU kernels for the CSR operators.

Each kernel is ``kernel(data, indices, indptr, x, out, err)``: it fills
``out`` (the bridge hands it over uninitialised) and, on bad structure (a
row's ``indptr`` range decreasing or leaving ``[0, len(indices)]``, a column
index outside ``[0, n)``), stops before the bad access and writes a message
to ``err``, which JAX raises as an exception. Only the entries a kernel
visits are checked: event-driven kernels skip rows without events.

Why the loops look the way they do (measured at m = n = 4000, 100
connections per row): the checks only set a flag inside the loops and the
message is built once after them (building strings in the loop made the
kernels 10x slower); homogeneous and per-entry weights get separate inner
loops (a shared ``data[k * step]`` cost 2x); ``transpose=False`` gathers row
by row (no scatter conflicts, one output write per row); ``transpose=True``
scatters from the rows that carry a nonzero/event only, so the event-driven
path costs events x connections per row.
"""

from __future__ import annotations

import numba
import numpy as np

from eventjax.backends.numba_bridge import report_error

__all__ = ['binary_csrmm_kernel', 'binary_csrmv_kernel', 'csrmm_kernel', 'csrmv_kernel']

_OK, _BAD_ROW, _BAD_COLUMN = 0, 1, 2


@numba.njit(cache=True)
def _report(err, kind, row, value, limit):
    if kind == _BAD_ROW:
        report_error(err, 'CSR kernel: indptr must be non-decreasing within [0, len(indices)]; row '
                     + str(row) + ' ends at ' + str(value) + '.')
    elif kind == _BAD_COLUMN:
        report_error(err, 'CSR kernel: column index ' + str(value) + ' in row ' + str(row)
                     + ' is outside [0, ' + str(limit) + ').')


@numba.njit(cache=True, inline='always')
def _row_ok(indptr, i, nnz):
    start, end = indptr[i], indptr[i + 1]
    return 0 <= start and start <= end and end <= nnz


@numba.njit(cache=True)
def _first_bad_column(indices, start, end, n):
    """The first column index in [start, end) outside [0, n), or -1 (checked before a row is used)."""
    for k in range(start, end):
        j = indices[k]
        if j < 0 or j >= n:
            return k
    return -1


@numba.njit(cache=True)
def _mv_gather(data, indices, indptr, v, out, err):
    """out[i] = sum_k data[k] * v[indices[k]] over row i."""
    nnz, n, homogeneous = indices.shape[0], v.shape[0], data.shape[0] == 1
    kind, row, value = _OK, 0, 0
    for i in range(out.shape[0]):
        if not _row_ok(indptr, i, nnz):
            kind, row, value = _BAD_ROW, i, indptr[i + 1]
            break
        acc = out.dtype.type(0)
        bad = False
        if homogeneous:
            for k in range(indptr[i], indptr[i + 1]):
                j = indices[k]
                bad |= (j < 0) | (j >= n)
                acc += v[min(max(j, 0), n - 1)]
            acc *= data[0]
        else:
            for k in range(indptr[i], indptr[i + 1]):
                j = indices[k]
                bad |= (j < 0) | (j >= n)
                acc += data[k] * v[min(max(j, 0), n - 1)]
        if bad:
            kind, row = _BAD_COLUMN, i
            value = indices[_first_bad_column(indices, indptr[i], indptr[i + 1], n)]
            break
        out[i] = acc
    _report(err, kind, row, value, n)


@numba.njit(cache=True)
def _binary_mv_gather(data, indices, indptr, spikes, out, err):
    """out[i] = sum of data[k] over row i where spikes[indices[k]] is an event."""
    # A 0/1 copy of the events turns this into the float gather: a branch
    # per entry on random events cost 3-4x.
    mask = np.empty(spikes.shape[0], out.dtype)
    for j in range(spikes.shape[0]):
        mask[j] = 1 if spikes[j] > 0 else 0
    _mv_gather(data, indices, indptr, mask, out, err)


@numba.njit(cache=True)
def _scatter_rows(data, indices, indptr, x, out, err, binary):
    """out[indices[k], :] += data[k] * x[i, :] for the rows i of x with a nonzero (an event)."""
    nnz, n, homogeneous = indices.shape[0], out.shape[0], data.shape[0] == 1
    cols = x.shape[1]
    xi = np.empty(cols, out.dtype)
    out[:] = 0
    for i in range(x.shape[0]):
        active = False
        for c in range(cols):
            xi[c] = (1 if x[i, c] > 0 else 0) if binary else x[i, c]
            active |= xi[c] != 0
        if not active:
            continue
        if not _row_ok(indptr, i, nnz):
            _report(err, _BAD_ROW, i, indptr[i + 1], n)
            return
        start, end = indptr[i], indptr[i + 1]
        k_bad = _first_bad_column(indices, start, end, n)
        if k_bad >= 0:
            _report(err, _BAD_COLUMN, i, indices[k_bad], n)
            return
        for k in range(start, end):
            w = data[0] if homogeneous else data[k]
            j = indices[k]
            for c in range(cols):
                out[j, c] += w * xi[c]


@numba.njit(cache=True)
def _mv_scatter(data, indices, indptr, v, out, err):
    _scatter_rows(data, indices, indptr, v.reshape(v.shape[0], 1), out.reshape(out.shape[0], 1), err, False)


@numba.njit(cache=True)
def _binary_mv_scatter(data, indices, indptr, spikes, out, err):
    """The event-driven path: only rows with an event are visited."""
    nnz, n, homogeneous = indices.shape[0], out.shape[0], data.shape[0] == 1
    out[:] = 0
    for i in range(spikes.shape[0]):
        if not spikes[i] > 0:
            continue
        if not _row_ok(indptr, i, nnz):
            _report(err, _BAD_ROW, i, indptr[i + 1], n)
            return
        start, end = indptr[i], indptr[i + 1]
        k_bad = _first_bad_column(indices, start, end, n)
        if k_bad >= 0:
            _report(err, _BAD_COLUMN, i, indices[k_bad], n)
            return
        if homogeneous:
            for k in range(start, end):
                out[indices[k]] += data[0]
        else:
            for k in range(start, end):
                out[indices[k]] += data[k]


@numba.njit(cache=True)
def _mm_gather(data, indices, indptr, B, out, err):
    """out[i, :] = sum_k data[k] * B[indices[k], :] (contiguous inner loop over B's columns)."""
    nnz, n, homogeneous = indices.shape[0], B.shape[0], data.shape[0] == 1
    out[:] = 0
    for i in range(out.shape[0]):
        if not _row_ok(indptr, i, nnz):
            _report(err, _BAD_ROW, i, indptr[i + 1], n)
            return
        start, end = indptr[i], indptr[i + 1]
        k_bad = _first_bad_column(indices, start, end, n)
        if k_bad >= 0:
            _report(err, _BAD_COLUMN, i, indices[k_bad], n)
            return
        for k in range(start, end):
            w = data[0] if homogeneous else data[k]
            j = indices[k]
            for c in range(B.shape[1]):
                out[i, c] += w * B[j, c]


@numba.njit(cache=True)
def _binary_csrmm_gather(data, indices, indptr, B, out, err):
    # As in _binary_mv_gather: a 0/1 copy of the events, then the float gather.
    mask = np.empty(B.shape, out.dtype)
    for j in range(B.shape[0]):
        for c in range(B.shape[1]):
            mask[j, c] = 1 if B[j, c] > 0 else 0
    _mm_gather(data, indices, indptr, mask, out, err)


@numba.njit(cache=True)
def _csrmm_scatter(data, indices, indptr, B, out, err):
    _scatter_rows(data, indices, indptr, B, out, err, False)


@numba.njit(cache=True)
def _binary_csrmm_scatter(data, indices, indptr, B, out, err):
    _scatter_rows(data, indices, indptr, B, out, err, True)


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
