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
kernels read ``w[(i * k + j) * step]`` with ``step = 0`` for a shared
weight. ``transpose=False`` gathers row by row (one output write per row,
contiguous reads of a row's indices); ``transpose=True`` scatters from the
rows of ``x`` (for binary kernels only the rows with an event, so the
event-driven path costs events x ``k``).
"""

from __future__ import annotations

import numba
import numpy as np

from eventjax.kernels.common.numba_events import event_columns, event_mask

__all__ = ['binary_fcnmm_kernel', 'binary_fcnmv_kernel', 'fcnmm_kernel', 'fcnmv_kernel']


@numba.njit(cache=True)
def _flat(weights):
    """The weights as a flat vector and the step that makes a homogeneous weight repeat."""
    w = weights.reshape(weights.size)
    return w, 0 if w.size == 1 else 1


@numba.njit(cache=True)
def _mv_gather(weights, indices, v, out, err):
    """out[i] = sum_j w[i, j] * v[indices[i, j]]."""
    w, step = _flat(weights)
    m, k, n = indices.shape[0], indices.shape[1], v.shape[0]
    for i in range(m):
        acc = out.dtype.type(0)
        base = i * k
        for j in range(k):
            c = indices[i, j]
            if 0 <= c and c < n:
                acc += w[(base + j) * step] * v[c]
        out[i] = acc


@numba.njit(cache=True)
def _mv_scatter(weights, indices, v, out, err):
    """out[indices[i, j]] += w[i, j] * v[i] for every row (zeros of v included)."""
    w, step = _flat(weights)
    m, k, n = indices.shape[0], indices.shape[1], out.shape[0]
    out[:] = 0
    for i in range(m):
        vi = v[i]
        for j in range(k):
            c = indices[i, j]
            if 0 <= c and c < n:
                out[c] += w[(i * k + j) * step] * vi


@numba.njit(cache=True)
def _binary_mv_gather(weights, indices, spikes, out, err):
    """out[i] = sum of w[i, j] over the connections whose target spikes[indices[i, j]] is an event."""
    w, step = _flat(weights)
    m, k, n = indices.shape[0], indices.shape[1], spikes.shape[0]
    mask = event_mask(spikes)
    for i in range(m):
        acc = out.dtype.type(0)
        base = i * k
        for j in range(k):
            c = indices[i, j]
            if 0 <= c and c < n and mask[c]:
                acc += w[(base + j) * step]
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
            if 0 <= c and c < n:
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
                continue
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
                continue
            wij = w[(i * k + j) * step]
            for col in range(B.shape[1]):
                out[c, col] += wij * B[i, col]


@numba.njit(cache=True)
def _binary_mm_gather(weights, indices, B, out, err):
    """out[i, col] = sum of w[i, j] over connections whose B[indices[i, j], col] is an event."""
    w, step = _flat(weights)
    m, k, n = indices.shape[0], indices.shape[1], B.shape[0]
    mask = event_mask(B)
    out[:] = 0
    for i in range(m):
        for j in range(k):
            c = indices[i, j]
            if c < 0 or c >= n:
                continue
            wij = w[(i * k + j) * step]
            for col in range(B.shape[1]):
                if mask[c, col]:
                    out[i, col] += wij


@numba.njit(cache=True)
def _binary_mm_scatter(weights, indices, B, out, err):
    """Event-driven: a row's event columns are listed once, rows without events skipped."""
    w, step = _flat(weights)
    m, k, n = indices.shape[0], indices.shape[1], out.shape[0]
    out[:] = 0
    active = np.empty(B.shape[1], np.int64)
    for i in range(m):
        count = event_columns(B, i, active)
        if count == 0:
            continue
        for j in range(k):
            c = indices[i, j]
            if c < 0 or c >= n:
                continue
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
