"""Numba CPU kernels for the plasticity updates: only the rows or columns of the events are visited.

Each kernel is ``kernel(weight, *structure, spikes, trace, out)`` (the trace
and spikes in the operator's order) where ``out`` aliases ``weight``: it
already holds the weights, and the kernel adds to the entries of the events
and bounds them. Under donation that is all the work, so an update costs
events x connections per row. Bad structure is dropped as on every backend:
the CSR kernels read a repaired ``indptr`` (repaired in JAX when the
structure was not validated) and skip an entry whose index is out of range.

Loops: the row updates run their events on numba's threads (no two events
share a row); the column update through the column view stays serial,
because only valid structure guarantees that two columns never name the
same weight.
"""

from __future__ import annotations

import math

import numba

from eventjax.kernels.common.numba_events import FASTMATH, event_indices

__all__ = ['csr2csc_on_post_kernel', 'csr_on_pre_kernel', 'dense_on_post_kernel', 'dense_on_pre_kernel',
           'fcn_on_pre_kernel']


def _limits(w_min, w_max):
    # Compared, never min/max'ed: a NaN weight or trace stays NaN, as on the other backends.
    return (-math.inf if w_min is None else float(w_min)), (math.inf if w_max is None else float(w_max))


def csr_on_pre_kernel(*, w_min=None, w_max=None, **_):
    """``out[k] += post_trace[indices[k]]`` for the entries ``k`` of every row with an event."""
    lo, hi = _limits(w_min, w_max)

    @numba.njit(fastmath=FASTMATH)
    def kernel(weight, indices, indptr, pre_spike, post_trace, out):
        n = post_trace.shape[0]
        nnz = indices.shape[0]
        t = out.dtype.type
        for i in event_indices(pre_spike):
            start, end = max(indptr[i], 0), min(indptr[i + 1], nnz)
            for k in range(start, end):
                j = indices[k]
                if 0 <= j < n:
                    v = out[k] + post_trace[j]
                    out[k] = t(lo) if v < lo else (t(hi) if v > hi else v)

    return kernel


def csr2csc_on_post_kernel(*, w_min=None, w_max=None, **_):
    """``out[weight_indices[c]] += pre_trace[indices[c]]`` for the entries ``c`` of every column with an event."""
    lo, hi = _limits(w_min, w_max)

    @numba.njit(fastmath=FASTMATH)
    def kernel(weight, indices, indptr, weight_indices, pre_trace, post_spike, out):
        m = pre_trace.shape[0]
        nnz = indices.shape[0]
        size = out.shape[0]
        t = out.dtype.type
        for j in event_indices(post_spike):
            start, end = max(indptr[j], 0), min(indptr[j + 1], nnz)
            for c in range(start, end):
                i, k = indices[c], weight_indices[c]
                if 0 <= i < m and 0 <= k < size:
                    v = out[k] + pre_trace[i]
                    out[k] = t(lo) if v < lo else (t(hi) if v > hi else v)

    return kernel


def dense_on_pre_kernel(*, w_min=None, w_max=None, **_):
    """``out[i, :] += post_trace`` for every row ``i`` with an event."""
    lo, hi = _limits(w_min, w_max)

    @numba.njit(fastmath=FASTMATH)
    def kernel(weight, pre_spike, post_trace, out):
        t = out.dtype.type
        for i in event_indices(pre_spike):
            for j in range(out.shape[1]):
                v = out[i, j] + post_trace[j]
                out[i, j] = t(lo) if v < lo else (t(hi) if v > hi else v)

    return kernel


def dense_on_post_kernel(*, w_min=None, w_max=None, **_):
    """``out[:, j] += pre_trace`` for every column ``j`` with an event."""
    lo, hi = _limits(w_min, w_max)

    @numba.njit(fastmath=FASTMATH)
    def kernel(weight, pre_trace, post_spike, out):
        t = out.dtype.type
        cols = event_indices(post_spike)
        for i in range(out.shape[0]):  # row-major: each row once, its event columns in it
            for j in cols:
                v = out[i, j] + pre_trace[i]
                out[i, j] = t(lo) if v < lo else (t(hi) if v > hi else v)

    return kernel


def fcn_on_pre_kernel(*, w_min=None, w_max=None, **_):
    """``out[i, c] += post_trace[indices[i, c]]`` for every row ``i`` with an event."""
    lo, hi = _limits(w_min, w_max)

    @numba.njit(fastmath=FASTMATH)
    def kernel(weight, indices, pre_spike, post_trace, out):
        n = post_trace.shape[0]
        t = out.dtype.type
        for i in event_indices(pre_spike):
            for c in range(out.shape[1]):
                j = indices[i, c]
                if 0 <= j < n:
                    v = out[i, c] + post_trace[j]
                    out[i, c] = t(lo) if v < lo else (t(hi) if v > hi else v)

    return kernel

