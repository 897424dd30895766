"""The plasticity updates in JAX: ``delta`` (what every backend computes) and the ``jax`` kernels.

``<op>_delta(*operands, **static)`` returns ``(increment, touched)`` shaped
like the weights: ``touched`` marks the stored entries an event reaches and
``increment`` what is added there (0 elsewhere). A kernel's result is
``apply_bounds(weight, increment, touched, w_min, w_max)``. Entries whose
index lies outside its range (unvalidated structure) are never touched, on
every backend. These kernels cost O(stored entries) per call: they are the
readable oracle; the numba, warp and pallas kernels visit only the rows or
columns of the events.
"""

from __future__ import annotations

import jax.numpy as jnp

from eventjax.kernels.common.events import event_indicator
from eventjax.kernels.common.update import apply_bounds

__all__ = [
    'csr2csc_on_post_delta', 'csr2csc_on_post_kernel', 'csr_on_pre_delta', 'csr_on_pre_kernel',
    'dense_on_post_delta', 'dense_on_post_kernel', 'dense_on_pre_delta', 'dense_on_pre_kernel',
    'entry_rows', 'fcn_on_pre_delta', 'fcn_on_pre_kernel',
]


def _is_event(spikes):
    return event_indicator(spikes, jnp.float32) > 0


def entry_rows(indptr, nnz: int):
    """The row of each stored entry, -1 for entries outside ``[indptr[0], indptr[-1])``.

    Example:
        >>> entry_rows(jnp.array([0, 2, 3]), 4)
        Array([ 0,  0,  1, -1], dtype=int32)
    """
    k = jnp.arange(nnz, dtype=indptr.dtype)
    rows = jnp.searchsorted(indptr, k, side='right').astype(indptr.dtype) - 1
    inside = (k >= indptr[0]) & (k < indptr[-1]) if indptr.shape[0] else jnp.zeros(nnz, bool)
    return jnp.where(inside, rows, -1)


def _take(values, idx):
    """``values[idx]`` where ``idx`` is in range (zero elsewhere), and whether it was."""
    ok = (idx >= 0) & (idx < values.shape[0])
    if not values.shape[0]:
        return jnp.zeros(idx.shape, values.dtype), ok
    return jnp.where(ok, values[jnp.clip(idx, 0, values.shape[0] - 1)], jnp.zeros((), values.dtype)), ok


def csr_on_pre_delta(weight, indices, indptr, pre_spike, post_trace, **static):
    """Row ``i`` of an event: ``weight[k] += post_trace[indices[k]]`` for its stored entries."""
    rows = entry_rows(indptr, indices.shape[0])
    fired, in_row = _take(_is_event(pre_spike), rows)
    trace, ok = _take(post_trace, indices)
    touched = fired & in_row & ok
    return jnp.where(touched, trace, jnp.zeros_like(weight)), touched


def csr2csc_on_post_delta(weight, indices, indptr, weight_indices, pre_trace, post_spike, **static):
    """Column ``j`` of an event: ``weight[weight_indices[c]] += pre_trace[indices[c]]`` for its entries ``c``."""
    cols = entry_rows(indptr, indices.shape[0])
    fired, in_col = _take(_is_event(post_spike), cols)
    trace, ok = _take(pre_trace, indices)
    pos_ok = (weight_indices >= 0) & (weight_indices < weight.shape[0])
    hit = fired & in_col & ok & pos_ok
    pos = jnp.where(hit, weight_indices, weight.shape[0])  # out of range: dropped by the scatter
    increment = jnp.zeros_like(weight).at[pos].add(jnp.where(hit, trace, jnp.zeros((), trace.dtype)), mode='drop')
    touched = jnp.zeros(weight.shape, bool).at[pos].set(True, mode='drop')
    return increment, touched


def dense_on_pre_delta(weight, pre_spike, post_trace, **static):
    """Row ``i`` of an event: ``weight[i, :] += post_trace``."""
    touched = jnp.broadcast_to(_is_event(pre_spike)[:, None], weight.shape)
    return jnp.where(touched, post_trace[None, :], jnp.zeros_like(weight)), touched


def dense_on_post_delta(weight, pre_trace, post_spike, **static):
    """Column ``j`` of an event: ``weight[:, j] += pre_trace``."""
    touched = jnp.broadcast_to(_is_event(post_spike)[None, :], weight.shape)
    return jnp.where(touched, pre_trace[:, None], jnp.zeros_like(weight)), touched


def fcn_on_pre_delta(weight, indices, pre_spike, post_trace, **static):
    """Row ``i`` of an event: ``weight[i, c] += post_trace[indices[i, c]]`` for every connection ``c``."""
    trace, ok = _take(post_trace, indices)
    touched = _is_event(pre_spike)[:, None] & ok
    return jnp.where(touched, trace, jnp.zeros_like(weight)), touched


def _kernel(delta):
    def kernel_generator(*, outs, w_min=None, w_max=None, **static):
        def kernel(weight, *rest):
            increment, touched = delta(weight, *rest)
            return (apply_bounds(weight, increment, touched, w_min, w_max),)
        return kernel
    return kernel_generator


csr_on_pre_kernel = _kernel(csr_on_pre_delta)


def csr2csc_on_post_kernel(*, outs, w_min=None, w_max=None, **static):
    # A gather of the touched weights and a scatter back: XLA updates a donated
    # weight buffer in place (a where over a scattered increment would copy it).
    def kernel(weight, indices, indptr, weight_indices, pre_trace, post_spike):
        cols = entry_rows(indptr, indices.shape[0])
        fired, in_col = _take(_is_event(post_spike), cols)
        trace, ok = _take(pre_trace, indices)
        hit = fired & in_col & ok & (weight_indices >= 0) & (weight_indices < weight.shape[0])
        pos = jnp.where(hit, weight_indices, weight.shape[0])
        old, _ = _take(weight, pos)
        new = apply_bounds(old, trace, hit, w_min, w_max)
        return (weight.at[pos].set(new, mode='drop'),)
    return kernel
dense_on_pre_kernel = _kernel(dense_on_pre_delta)
dense_on_post_kernel = _kernel(dense_on_post_delta)
fcn_on_pre_kernel = _kernel(fcn_on_pre_delta)
