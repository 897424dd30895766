"""Event-driven ``jax`` kernels for the plasticity updates: only the rows (columns) of the events are touched.

The neurons with an event are taken a chunk at a time
(:func:`~eventjax.kernels.common.compaction.by_event_chunks`), each with a
static number of slots (1.25x the mean row or column, at most the longest,
``max_len``); a pass gathers its entries, updates and bounds them, and
scatters them back with ``.at[].set``. A row longer than that is read in
pieces, one more pass over the event rows still that long per piece, as
the delay kernel does: one long row among short ones costs its own pieces,
not its length in slots for every row. The weights are the loop's carry, so XLA updates them in
place: under ``jax.jit(..., donate_argnums=...)`` or in a ``lax.scan``
carry nothing is copied. CSR updates whose longest row is unknown (traced
structure without ``max_row_length``) fall back to the O(stored entries)
kernels of ``reference``. Bad structure is dropped as in ``reference``.
"""

from __future__ import annotations

import jax.numpy as jnp

from eventjax.kernels.common.compaction import by_event_pieces, event_mask, piece_width
from eventjax.kernels.common.update import apply_bounds
from eventjax.kernels.plasticity import reference

__all__ = ['csr2csc_on_post_kernel', 'csr_on_pre_kernel', 'dense_on_post_kernel', 'dense_on_pre_kernel',
           'fcn_on_pre_kernel']


def _segments(weight, spikes, starts, lens, max_len, trace, partner_of, w_min, w_max, position_of=None):
    """``weight`` with ``trace[partner]`` added (and bounded) on the slots of every event ``i``."""
    m, size, n = spikes.shape[0], weight.shape[0], trace.shape[0]
    if m == 0 or size == 0 or max_len == 0 or n == 0:
        return weight
    width = piece_width(size, m, max_len)

    def one_pass(neuron, valid, skip, slots, weight):
        length = jnp.where(valid, lens[neuron], 0)  # one gather per neuron, broadcast over its slots
        first = starts[neuron]
        # The pointers' dtype (int64 under x64).
        slot = jnp.asarray(skip).astype(first.dtype) + jnp.arange(slots, dtype=first.dtype)[None, :]
        ok = slot < length[:, None]
        at = jnp.where(ok, first[:, None] + slot, 0).reshape(-1)
        ok = ok.reshape(-1)
        j = partner_of(at)
        pos = at if position_of is None else position_of(at)
        ok &= (j >= 0) & (j < n) & (pos >= 0) & (pos < size)
        pos = jnp.where(ok, pos, size)  # past the end: dropped by the scatter
        old = weight[jnp.minimum(pos, size - 1)]
        new = apply_bounds(old, trace[jnp.clip(j, 0, n - 1)], ok, w_min, w_max)
        return weight.at[pos].set(new, mode='drop')

    # numba and warp read whole rows: a row past max_len (a wrong max_row_length) takes more pieces.
    return by_event_pieces(event_mask(spikes), lens, width, max_len, one_pass, weight)


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


def _by_full_rows(weight, pre_spike, post_trace, column_of, w_min, w_max):
    """:func:`_segments` over the rows of an ``(m, k)`` weight, every row ``k`` entries long, stored flat."""
    m, k = weight.shape
    starts = jnp.arange(m, dtype=jnp.int32) * k
    flat = _segments(weight.reshape(m * k), pre_spike, starts, jnp.full((m,), k, jnp.int32), k, post_trace,
                     column_of, w_min, w_max)
    return (flat.reshape(m, k),)


def fcn_on_pre_kernel(*, outs, w_min=None, w_max=None, **static):
    def kernel(weight, indices, pre_spike, post_trace):
        return _by_full_rows(weight, pre_spike, post_trace, lambda at: indices.reshape(-1)[at], w_min, w_max)
    return kernel


def dense_on_pre_kernel(*, outs, w_min=None, w_max=None, **static):
    def kernel(weight, pre_spike, post_trace):
        n = weight.shape[1]
        return _by_full_rows(weight, pre_spike, post_trace, lambda at: at % n, w_min, w_max)
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
