"""Event-driven ``jax`` kernels for the plasticity updates: only the rows (columns) of the events are touched.

The neurons with an event are taken a chunk at a time (``chunk`` neurons of
``max_len`` slots each, ``max_len`` the longest row or column, a static
parameter) in a ``lax.fori_loop`` that runs ``ceil(events / chunk)`` times;
each pass gathers its entries, updates and bounds them, and scatters them
back with ``.at[].set``. The weights are the loop's carry, so XLA updates
them in place: under ``jax.jit(..., donate_argnums=...)`` or in a
``lax.scan`` carry nothing is copied (a ``lax.switch`` over event counts,
the products' compaction, would copy the weights into its branches on
XLA:CPU). The chunk's neurons are found from the running event count by a
binary search, so no pass reads all ``m`` neurons but the count itself.
CSR updates whose longest row is unknown (traced structure without
``max_row_length``) fall back to the O(stored entries) kernels of
``reference``. Bad structure is dropped as in ``reference``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from eventjax.kernels.common.compaction import event_count_prefix, event_mask
from eventjax.kernels.common.update import apply_bounds
from eventjax.kernels.plasticity import reference

__all__ = ['CHUNK_SLOTS', 'csr2csc_on_post_kernel', 'csr_on_pre_kernel', 'dense_on_post_kernel',
           'dense_on_pre_kernel', 'fcn_on_pre_kernel']

# Slots (entries) one pass of the loop gathers and scatters: large enough that
# the loop's per-pass cost (a few microseconds on XLA:CPU) stays small next to
# the work, small enough that a pass with few events wastes little.
CHUNK_SLOTS = 8192


def _segments(weight, spikes, starts, lens, max_len, trace, partner_of, w_min, w_max, position_of=None):
    """``weight`` with ``trace[partner]`` added (and bounded) on the slots of every event ``i``."""
    m, size, n = spikes.shape[0], weight.shape[0], trace.shape[0]
    if m == 0 or size == 0 or max_len == 0 or n == 0:
        return weight
    prefix = event_count_prefix(event_mask(spikes))
    total = prefix[-1]
    chunk = max(1, min(m, CHUNK_SLOTS // max_len))
    off = jnp.arange(max_len, dtype=jnp.int32)[None, :]

    def one_pass(c, weight):
        # The events ranked c * chunk + 1 ... (c + 1) * chunk: the first neuron whose running count reaches the rank.
        rank = c * chunk + jnp.arange(1, chunk + 1, dtype=jnp.int32)
        neuron = jnp.searchsorted(prefix, rank, side='left', method='scan_unrolled').astype(jnp.int32)
        neuron = jnp.minimum(neuron, m - 1)
        length = jnp.where(rank <= total, lens[neuron], 0)  # one gather per neuron, broadcast over its slots
        ok = off < length[:, None]
        at = jnp.where(ok, starts[neuron][:, None] + off, 0).reshape(-1)
        ok = ok.reshape(-1)
        j = partner_of(at)
        pos = at if position_of is None else position_of(at)
        ok &= (j >= 0) & (j < n) & (pos >= 0) & (pos < size)
        pos = jnp.where(ok, pos, size)  # past the end: dropped by the scatter
        old = weight[jnp.minimum(pos, size - 1)]
        new = apply_bounds(old, trace[jnp.clip(j, 0, n - 1)], ok, w_min, w_max)
        return weight.at[pos].set(new, mode='drop')

    return jax.lax.fori_loop(0, (total + chunk - 1) // chunk, one_pass, weight)


def csr_on_pre_kernel(*, outs, w_min=None, w_max=None, max_row=None, **static):
    if max_row is None:
        return reference.csr_on_pre_kernel(outs=outs, w_min=w_min, w_max=w_max)

    def kernel(weight, indices, indptr, pre_spike, post_trace):
        lens = jnp.maximum(indptr[1:] - indptr[:-1], 0)
        return (_segments(weight, pre_spike, indptr[:-1], lens, max_row, post_trace, lambda at: indices[at],
                          w_min, w_max),)
    return kernel


def csr2csc_on_post_kernel(*, outs, w_min=None, w_max=None, max_col=None, **static):
    if max_col is None:
        return reference.csr2csc_on_post_kernel(outs=outs, w_min=w_min, w_max=w_max)

    def kernel(weight, indices, indptr, weight_indices, pre_trace, post_spike):
        lens = jnp.maximum(indptr[1:] - indptr[:-1], 0)
        return (_segments(weight, post_spike, indptr[:-1], lens, max_col, pre_trace, lambda at: indices[at],
                          w_min, w_max, position_of=lambda at: weight_indices[at]),)
    return kernel


def fcn_on_pre_kernel(*, outs, w_min=None, w_max=None, **static):
    def kernel(weight, indices, pre_spike, post_trace):
        m, k = weight.shape
        starts = jnp.arange(m, dtype=jnp.int32) * k
        flat = _segments(weight.reshape(m * k), pre_spike, starts, jnp.full((m,), k, jnp.int32), k, post_trace,
                         lambda at: indices.reshape(m * k)[at], w_min, w_max)
        return (flat.reshape(m, k),)
    return kernel


def dense_on_pre_kernel(*, outs, w_min=None, w_max=None, **static):
    def kernel(weight, pre_spike, post_trace):
        m, n = weight.shape
        starts = jnp.arange(m, dtype=jnp.int32) * n
        flat = _segments(weight.reshape(m * n), pre_spike, starts, jnp.full((m,), n, jnp.int32), n, post_trace,
                         lambda at: at % n, w_min, w_max)
        return (flat.reshape(m, n),)
    return kernel


def dense_on_post_kernel(*, outs, w_min=None, w_max=None, **static):
    def kernel(weight, pre_trace, post_spike):
        m, n = weight.shape
        # Column j's slots are virtual positions j * m + i; entry (i, j) sits at i * n + j.
        starts = jnp.arange(n, dtype=jnp.int32) * m
        flat = _segments(weight.reshape(m * n), post_spike, starts, jnp.full((n,), m, jnp.int32), m, pre_trace,
                         lambda at: at % m, w_min, w_max, position_of=lambda at: (at % m) * n + at // m)
        return (flat.reshape(m, n),)
    return kernel
