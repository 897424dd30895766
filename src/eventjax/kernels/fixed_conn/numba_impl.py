"""Numba CPU kernels for the FCN operators.

Each kernel is ``kernel(weights, indices, x, out, err)``: ``weights`` is
``(m, k)`` or ``(1, 1)`` (homogeneous), ``indices`` is ``(m, k)``. It fills
``out`` (not zeroed by the bridge) and, on an index outside ``[0, n)``,
writes a message to ``err`` and returns without reading or writing out of
bounds; JAX raises it as an exception. Only the connections a kernel visits
are checked: the event-driven kernels skip rows without events.

Why the loops look the way they do (measured at m = n = 4000, k = 100):
messages are built only on a cold, never-inlined path (string building in a
hot loop made the gathers 6-10x slower); the mv gathers check a row
branch-free (clamped reads, one flag) and give a shared weight its own loop;
the other kernels read ``w[(i * k + j) * step]`` with ``step = 0`` for a
shared weight. ``transpose=False`` gathers row by row (one output write per
row, contiguous reads of a row's indices); ``transpose=True`` scatters only
from the rows whose ``x`` entry is nonzero (an event), so the event-driven
path costs events x ``k``.
"""

from __future__ import annotations

import numba
import numpy as np

from eventjax.backends.numba_bridge import report_error

__all__ = ['binary_fcnmm_kernel', 'binary_fcnmv_kernel', 'fcnmm_kernel', 'fcnmv_kernel']


@numba.njit(cache=True)
def _flat(weights):
    """The weights as a flat vector and the step that makes a homogeneous weight repeat."""
    w = weights.reshape(weights.size)
    return w, 0 if w.size == 1 else 1


# Never inlined: string building inside a hot loop's body slows the loop ~6x,
# so kernels test the index inline and call this only on the cold path.
@numba.njit(cache=True, inline='never')
def _fail(err, i, c, n):
    report_error(err, 'FCN kernel: index ' + str(c) + ' in row ' + str(i) + ' is outside [0, '
                 + str(n) + '); check indices against shape, or call FixedNumConn.validate().')


@numba.njit(cache=True, inline='never')
def _fail_row(err, indices, i, n):
    """Report the first out-of-range index of row ``i`` (the cold path of the gathers)."""
    for j in range(indices.shape[1]):
        c = indices[i, j]
        if c < 0 or c >= n:
            _fail(err, i, c, n)
            return


@numba.njit(cache=True)
def _mv_gather(weights, indices, v, out, err):
    """out[i] = sum_j w[i, j] * v[indices[i, j]].

    The row's indices are checked branch-free and clamped, and the row is
    reported after its loop; a shared weight gets its own loop (a multiply
    after the sum), which vectorises better than a strided read.
    """
    w = weights.reshape(weights.size)
    m, k, n = indices.shape[0], indices.shape[1], v.shape[0]
    if n == 0 and m > 0 and k > 0:
        _fail_row(err, indices, 0, n)
        return
    for i in range(m):
        acc = out.dtype.type(0)
        bad = False
        if w.size == 1:
            for j in range(k):
                c = indices[i, j]
                bad |= (c < 0) | (c >= n)
                acc += v[min(max(c, 0), n - 1)]
            acc *= w[0]
        else:
            base = i * k
            for j in range(k):
                c = indices[i, j]
                bad |= (c < 0) | (c >= n)
                acc += w[base + j] * v[min(max(c, 0), n - 1)]
        if bad:
            _fail_row(err, indices, i, n)
            return
        out[i] = acc


@numba.njit(cache=True)
def _mv_scatter(weights, indices, v, out, err):
    """out[indices[i, j]] += w[i, j] * v[i] for the rows with v[i] != 0."""
    w, step = _flat(weights)
    m, k, n = indices.shape[0], indices.shape[1], out.shape[0]
    out[:] = 0
    for i in range(m):
        vi = v[i]
        if vi == 0:
            continue
        for j in range(k):
            c = indices[i, j]
            if c < 0 or c >= n:
                _fail(err, i, c, n)
                return
            out[c] += w[(i * k + j) * step] * vi


@numba.njit(cache=True)
def _binary_mv_gather(weights, indices, spikes, out, err):
    """out[i] = sum of w[i, j] over the connections whose target spikes[indices[i, j]] is an event."""
    w = weights.reshape(weights.size)
    m, k, n = indices.shape[0], indices.shape[1], spikes.shape[0]
    if n == 0 and m > 0 and k > 0:
        _fail_row(err, indices, 0, n)
        return
    for i in range(m):
        acc = out.dtype.type(0)
        bad = False
        if w.size == 1:
            count = 0
            for j in range(k):
                c = indices[i, j]
                bad |= (c < 0) | (c >= n)
                count += spikes[min(max(c, 0), n - 1)] > 0
            acc = w[0] * count
        else:
            base = i * k
            for j in range(k):
                c = indices[i, j]
                bad |= (c < 0) | (c >= n)
                if spikes[min(max(c, 0), n - 1)] > 0:
                    acc += w[base + j]
        if bad:
            _fail_row(err, indices, i, n)
            return
        out[i] = acc


@numba.njit(cache=True)
def _binary_mv_scatter(weights, indices, spikes, out, err):
    """The event-driven path: only the rows with an event are visited."""
    w, step = _flat(weights)
    m, k, n = indices.shape[0], indices.shape[1], out.shape[0]
    out[:] = 0
    for i in range(m):
        if not spikes[i] > 0:
            continue
        for j in range(k):
            c = indices[i, j]
            if c < 0 or c >= n:
                _fail(err, i, c, n)
                return
            out[c] += w[(i * k + j) * step]


@numba.njit(cache=True)
def _mm_gather(weights, indices, B, out, err):
    """out[i, :] = sum_j w[i, j] * B[indices[i, j], :] (contiguous inner loop)."""
    w, step = _flat(weights)
    m, k, n = indices.shape[0], indices.shape[1], B.shape[0]
    out[:] = 0
    for i in range(m):
        for j in range(k):
            c = indices[i, j]
            if c < 0 or c >= n:
                _fail(err, i, c, n)
                return
            wij = w[(i * k + j) * step]
            for col in range(B.shape[1]):
                out[i, col] += wij * B[c, col]


@numba.njit(cache=True)
def _mm_scatter(weights, indices, B, out, err):
    """out[indices[i, j], :] += w[i, j] * B[i, :]."""
    w, step = _flat(weights)
    m, k, n = indices.shape[0], indices.shape[1], out.shape[0]
    out[:] = 0
    for i in range(m):
        for j in range(k):
            c = indices[i, j]
            if c < 0 or c >= n:
                _fail(err, i, c, n)
                return
            wij = w[(i * k + j) * step]
            for col in range(B.shape[1]):
                out[c, col] += wij * B[i, col]


@numba.njit(cache=True)
def _binary_mm_gather(weights, indices, B, out, err):
    """out[i, col] = sum of w[i, j] over connections whose B[indices[i, j], col] is an event."""
    w, step = _flat(weights)
    m, k, n = indices.shape[0], indices.shape[1], B.shape[0]
    out[:] = 0
    for i in range(m):
        for j in range(k):
            c = indices[i, j]
            if c < 0 or c >= n:
                _fail(err, i, c, n)
                return
            wij = w[(i * k + j) * step]
            for col in range(B.shape[1]):
                if B[c, col] > 0:
                    out[i, col] += wij


@numba.njit(cache=True)
def _binary_mm_scatter(weights, indices, B, out, err):
    """Event-driven: a row's event columns are listed once, rows without events skipped."""
    w, step = _flat(weights)
    m, k, n = indices.shape[0], indices.shape[1], out.shape[0]
    out[:] = 0
    active = np.empty(B.shape[1], np.int64)
    for i in range(m):
        count = 0
        for col in range(B.shape[1]):
            if B[i, col] > 0:
                active[count] = col
                count += 1
        if count == 0:
            continue
        for j in range(k):
            c = indices[i, j]
            if c < 0 or c >= n:
                _fail(err, i, c, n)
                return
            wij = w[(i * k + j) * step]
            for a in range(count):
                out[c, active[a]] += wij


def fcnmv_kernel(*, transpose):
    """The kernel for ``fcnmv``."""
    return _mv_scatter if transpose else _mv_gather


def binary_fcnmv_kernel(*, transpose):
    """The kernel for ``binary_fcnmv``."""
    return _binary_mv_scatter if transpose else _binary_mv_gather


def fcnmm_kernel(*, transpose):
    """The kernel for ``fcnmm``."""
    return _mm_scatter if transpose else _mm_gather


def binary_fcnmm_kernel(*, transpose):
    """The kernel for ``binary_fcnmm``."""
    return _binary_mm_scatter if transpose else _binary_mm_gather
