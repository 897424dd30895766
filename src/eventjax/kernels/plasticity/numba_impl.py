"""Numba CPU kernels for the plasticity updates: only the rows or columns of the events are visited.

Each kernel is ``kernel(weight, *structure, spikes, trace, bounds, out)``
(the trace and spikes in the operator's order) where ``out`` aliases
``weight``: it already holds the weights, and the kernel adds to the entries
of the events and bounds them to ``[bounds[0], bounds[1]]`` (``-inf`` /
``inf`` for no bound). The bounds are an operand, not constants compiled in
(:class:`~eventjax.kernels.common.update.Update` appends them), so one
compiled handler per dtype serves every pair of bounds (compiled in, each
pair would cost a numba compile). Under donation that is all the
work, so an update costs events x connections per row. Bad structure is dropped as on every backend:
the CSR kernels repair ``indptr`` themselves (:func:`trusted_indptr`, one
pass that only checks a valid one; the other backends get the same repair
in JAX, whose check and conditional before the custom call cost more than
a small update) and skip an entry whose index is out of range.

Why the loops look the way they do (the plasticity page of the docs has
the measurements): the bounds are Python's
``min(max(v, lo), hi)`` with the NaN passed through by ``v == v``, which
compiles to selects; ``np.minimum(np.maximum(...))`` keeps a NaN too but
calls NumPy's scalar NaN checks per entry; written as
``lo if v < lo else ...`` numba emitted branches that a random trace
mispredicts. Indices are read unsigned, so one compare
drops a bad one. From ``PREFETCH_MIN_ENTRIES`` stored entries on (beyond
the last-level cache) the rows (columns) ``ROWS_AHEAD`` events ahead are
prefetched, as in the forward product's scatter. The loops stay serial:
numba's threads cost more to wake than a typical update takes, and without validated structure two columns of the column
view may name the same weight.
"""

from __future__ import annotations

import numba
import numpy as np

from eventjax.kernels.common.numba.events import (
    FASTMATH,
    PREFETCH_MIN_ENTRIES,
    ROWS_AHEAD,
    event_indices,
    prefetch_entries,
    trusted_indptr,
)

__all__ = ['csr2csc_on_post_kernel', 'csr_on_pre_kernel', 'dense_on_post_kernel', 'dense_on_pre_kernel',
           'fcn_on_pre_kernel']

_U = np.uint64


@numba.njit(cache=True, inline='always')
def _bounded(v, lo, hi):
    """``v`` bounded to ``[lo, hi]``; a NaN stays NaN, as in the JAX reference (``where(v < lo, lo, v)``)."""
    r = min(max(v, lo), hi)
    return r if v == v else v


@numba.njit(cache=True, inline='always')
def _segment_range(indptr, i, nnz):
    """Segment ``i``'s entries ``[start, end)``, clipped to ``[0, nnz)``."""
    return max(np.int64(indptr[i]), 0), min(np.int64(indptr[i + 1]), nnz)


def _event_segments(positioned):
    """The update of the segments of the events: ``out[p(c)] += trace[indices[c]]`` over each event's entries.

    ``p(c)`` is ``positions[c]`` when ``positioned`` (a column of the column
    view names its weights through them), else ``c`` itself; as a constant
    of the closure, the other branch is compiled away.
    """
    @numba.njit(fastmath=FASTMATH, inline='always')
    def update(indices, indptr, positions, trace, spikes, bounds, out):
        size = _U(trace.shape[0])
        nnz = indices.shape[0]
        indptr = trusted_indptr(indptr, nnz)
        n_out = _U(out.shape[0])
        low, high = bounds[0], bounds[1]
        events = event_indices(spikes)
        ahead = ROWS_AHEAD if nnz >= PREFETCH_MIN_ENTRIES else events.shape[0]
        for a in range(events.shape[0]):
            if a + ahead < events.shape[0]:
                start, end = _segment_range(indptr, events[a + ahead], nnz)
                prefetch_entries(indices, start, end)
                if positioned:
                    prefetch_entries(positions, start, end)
                else:
                    prefetch_entries(out, start, end)
            start, end = _segment_range(indptr, events[a], nnz)
            for c in range(start, end):
                j = _U(np.int64(indices[c]))
                k = _U(np.int64(positions[c])) if positioned else _U(c)
                if j < size and (k < n_out or not positioned):
                    out[k] = _bounded(out[k] + trace[j], low, high)

    return update


_rows_update, _columns_update = _event_segments(False), _event_segments(True)


@numba.njit(fastmath=FASTMATH)
def _csr_on_pre(weight, indices, indptr, pre_spike, post_trace, bounds, out):
    _rows_update(indices, indptr, indices, post_trace, pre_spike, bounds, out)


def csr_on_pre_kernel(**_):
    """``out[k] += post_trace[indices[k]]`` for the entries ``k`` of every row with an event."""
    return _csr_on_pre


@numba.njit(fastmath=FASTMATH)
def _csr2csc_on_post(weight, indices, indptr, weight_indices, pre_trace, post_spike, bounds, out):
    _columns_update(indices, indptr, weight_indices, pre_trace, post_spike, bounds, out)


def csr2csc_on_post_kernel(**_):
    """``out[weight_indices[c]] += pre_trace[indices[c]]`` for the entries ``c`` of every column with an event."""
    return _csr2csc_on_post


def dense_on_pre_kernel(**_):
    """``out[i, :] += post_trace`` for every row ``i`` with an event."""
    @numba.njit(fastmath=FASTMATH)
    def kernel(weight, pre_spike, post_trace, bounds, out):
        low, high = bounds[0], bounds[1]
        for i in event_indices(pre_spike):
            for j in range(out.shape[1]):
                out[i, j] = _bounded(out[i, j] + post_trace[j], low, high)

    return kernel


def dense_on_post_kernel(**_):
    """``out[:, j] += pre_trace`` for every column ``j`` with an event."""
    @numba.njit(fastmath=FASTMATH)
    def kernel(weight, pre_trace, post_spike, bounds, out):
        low, high = bounds[0], bounds[1]
        cols = event_indices(post_spike)
        for i in range(out.shape[0]):  # row-major: each row once, its event columns in it
            for j in cols:
                out[i, j] = _bounded(out[i, j] + pre_trace[i], low, high)

    return kernel


def fcn_on_pre_kernel(**_):
    """``out[i, c] += post_trace[indices[i, c]]`` for every row ``i`` with an event."""
    @numba.njit(fastmath=FASTMATH)
    def kernel(weight, indices, pre_spike, post_trace, bounds, out):
        n = _U(post_trace.shape[0])
        low, high = bounds[0], bounds[1]
        for i in event_indices(pre_spike):
            for c in range(out.shape[1]):
                j = _U(np.int64(indices[i, c]))
                if j < n:
                    out[i, c] = _bounded(out[i, c] + post_trace[j], low, high)

    return kernel

