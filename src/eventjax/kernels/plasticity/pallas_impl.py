"""Pallas kernels (gpu, Triton lowering; the cpu in interpret mode) for the plasticity updates.

Each generator ``kg(*, outs, w_min, w_max, **static)`` returns ``call(*operands,
*, interpret)``, the form :mod:`eventjax.backends.pallas` expects.
Every update is the same walk: one program per block of neurons (rows on
pre, columns on post); a neuron without an event returns at once, otherwise
it visits its segment of stored entries and, for each, adds the trace of the
partner neuron to the weight at that entry's position and bounds it. The
weights are flattened and passed as input 0, aliased to the output
(``pallas_call(..., input_output_aliases={0: 0})``), so the kernel writes
only the entries it touches; under donation or in a ``lax.scan`` carry
nothing else is copied.

The segments:

- ``csr_on_pre``: row ``i`` owns ``[indptr[i], indptr[i + 1])``, partner ``indices[k]``, position ``k``;
- ``csr2csc_on_post``: column ``j`` owns ``[indptr[j], indptr[j + 1])`` of the column view,
  partner ``indices[c]``, position ``weight_indices[c]``;
- ``fcn_on_pre``: row ``i`` owns ``[i * k, (i + 1) * k)``, partner ``indices[i, c]``;
- ``dense_on_pre`` / ``dense_on_post``: row ``i`` (column ``j``) owns its ``n`` (``m``) entries
  at positions ``i * n + j``.

Entries whose partner or position is out of range are skipped and segment
bounds are clipped to the stored entries, so unvalidated structure is
dropped as on every backend (the operators repair ``indptr`` first). Bounds
are compares, so a NaN stays NaN. Each entry is a scalar load and store:
correct everywhere, but on a GPU one lane per program does the work (the
kernels are not tuned; nothing here was measured on a GPU). Rows own
disjoint segments, so programs never write the same weight; a column view
not built by :func:`eventjax.csr_column_view` that names one position in two
columns would race on the GPU. Mosaic has no scalar stores at
data-dependent addresses of this kind: the TPU kernels of ``dense_on_pre``
and ``fcn_on_pre`` (whole rows by DMA) are in ``pallas_tpu``, that of
``csr_on_pre`` (128-wide pieces by DMA) in ``pallas_tpu_csr``, that of
``dense_on_post`` (the 128-wide column tiles of the events) in
``pallas_tpu_post`` and that of ``csr2csc_on_post`` (the weight pieces of
the event columns' entries) in ``pallas_tpu_csc``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

from eventjax.kernels.common.events import event_indicator
from eventjax.kernels.common.pallas.rows import triton_params
from eventjax.kernels.plasticity.pallas_tpu import dense_on_pre_tpu_kernel, fcn_on_pre_tpu_kernel
from eventjax.kernels.plasticity.pallas_tpu_csc import csr2csc_on_post_tpu_kernel
from eventjax.kernels.plasticity.pallas_tpu_csr import csr_on_pre_tpu_kernel
from eventjax.kernels.plasticity.pallas_tpu_post import dense_on_post_tpu_kernel

__all__ = ['TPU_DEFAULT', 'csr2csc_on_post_kernel', 'csr2csc_on_post_tpu_kernel', 'csr_on_pre_kernel',
           'csr_on_pre_tpu_kernel', 'dense_on_post_kernel', 'dense_on_post_tpu_kernel', 'dense_on_pre_kernel',
           'dense_on_pre_tpu_kernel', 'fcn_on_pre_kernel', 'fcn_on_pre_tpu_kernel']

# The updates whose pallas kernel is the default on a TPU: those that beat the jax kernels on the chip.
# csr2csc_on_post's moves a 128-wide piece per entry and trails XLA's gather and scatter (docs/tpu.rst).
TPU_DEFAULT = frozenset({'dense_on_pre', 'fcn_on_pre', 'csr_on_pre', 'dense_on_post'})

_NEURONS_PER_PROGRAM = 8


def _bounded(v, w_min, w_max):
    if w_min is not None:
        v = jnp.where(v < w_min, jnp.asarray(w_min, v.dtype), v)
    if w_max is not None:
        v = jnp.where(v > w_max, jnp.asarray(w_max, v.dtype), v)
    return v


def _body(count, n_trace, size, segment, w_min, w_max):
    """The kernel body; ``segment(struct_refs, e) -> (start, end, partner(c), position(c))``."""
    def body(_weight_ref, spikes_ref, trace_ref, *rest):
        *struct_refs, out_ref = rest
        base = pl.program_id(0) * _NEURONS_PER_PROGRAM

        def neuron(r, carry):
            e = base + r

            @pl.when((e < count) & (spikes_ref[jnp.minimum(e, count - 1)] > 0))
            def _():
                start, end, partner, position = segment(struct_refs, e)

                def entry(c, carry):
                    j, p = partner(c), position(c)

                    @pl.when((j >= 0) & (j < n_trace) & (p >= 0) & (p < size))
                    def _():
                        out_ref[p] = _bounded(out_ref[p] + trace_ref[j], w_min, w_max)
                    return carry

                lax.fori_loop(start, end, entry, 0)
            return carry

        lax.fori_loop(0, _NEURONS_PER_PROGRAM, neuron, 0)
    return body


def _update_call(weight, spikes, trace, structure, segment, *, w_min, w_max, interpret):
    """Run the walk over the neurons of ``spikes``; ``weight`` (any shape) is updated through a flat alias."""
    count, size, n_trace = spikes.shape[0], weight.size, trace.shape[0]
    # No entry to visit (an empty structure array, e.g. the column view of a structure whose entries were
    # all dropped): the body would still be traced, and a load from an empty ref fails to lower.
    if count == 0 or size == 0 or n_trace == 0 or any(s.size == 0 for s in structure):
        return weight
    flat = weight.reshape(size)
    out = pl.pallas_call(
        _body(count, n_trace, size, segment, w_min, w_max),
        out_shape=jax.ShapeDtypeStruct((size,), weight.dtype), grid=(pl.cdiv(count, _NEURONS_PER_PROGRAM),),
        input_output_aliases={0: 0}, interpret=interpret, compiler_params=triton_params(),
    )(flat, event_indicator(spikes, jnp.int32), trace, *structure)
    return out.reshape(weight.shape)


def _csr_segment(nnz, with_positions):
    def segment(refs, e):
        indices_ref, indptr_ref = refs[0], refs[1]
        start, end = jnp.clip(indptr_ref[e], 0, nnz), jnp.clip(indptr_ref[e + 1], 0, nnz)
        position = (lambda c: refs[2][c]) if with_positions else (lambda c: c)
        return start, end, lambda c: indices_ref[c], position
    return segment


def csr_on_pre_kernel(*, outs, w_min=None, w_max=None, **static):
    """On row events: ``weight[k] += post_trace[indices[k]]``, ``k`` in the row's segment."""
    def call(weight, indices, indptr, pre_spike, post_trace, *, interpret):
        return _update_call(weight, pre_spike, post_trace, (indices, indptr), _csr_segment(indices.shape[0], False),
                            w_min=w_min, w_max=w_max, interpret=interpret)
    return call


def csr2csc_on_post_kernel(*, outs, w_min=None, w_max=None, **static):
    """On column events: ``weight[weight_indices[c]] += pre_trace[indices[c]]``, ``c`` in the column's segment."""
    def call(weight, indices, indptr, weight_indices, pre_trace, post_spike, *, interpret):
        return _update_call(weight, post_spike, pre_trace, (indices, indptr, weight_indices),
                            _csr_segment(indices.shape[0], True), w_min=w_min, w_max=w_max, interpret=interpret)
    return call


def fcn_on_pre_kernel(*, outs, w_min=None, w_max=None, **static):
    """On row events: ``weight[i, c] += post_trace[indices[i, c]]`` for every connection ``c``."""
    def call(weight, indices, pre_spike, post_trace, *, interpret):
        k = weight.shape[1]

        def segment(refs, i):
            return i * k, (i + 1) * k, lambda c: refs[0][c], lambda c: c

        return _update_call(weight, pre_spike, post_trace, (indices.reshape(-1),), segment, w_min=w_min,
                            w_max=w_max, interpret=interpret)
    return call


def dense_on_pre_kernel(*, outs, w_min=None, w_max=None, **static):
    """On row events: ``weight[i, :] += post_trace``."""
    def call(weight, pre_spike, post_trace, *, interpret):
        n = weight.shape[1]

        def segment(refs, i):
            return 0, n, lambda j: j, lambda j: i * n + j

        return _update_call(weight, pre_spike, post_trace, (), segment, w_min=w_min, w_max=w_max,
                            interpret=interpret)
    return call


def dense_on_post_kernel(*, outs, w_min=None, w_max=None, **static):
    """On column events: ``weight[:, j] += pre_trace``."""
    def call(weight, pre_trace, post_spike, *, interpret):
        m, n = weight.shape

        def segment(refs, j):
            return 0, m, lambda i: i, lambda i: i * n + j

        return _update_call(weight, post_spike, pre_trace, (), segment, w_min=w_min, w_max=w_max,
                            interpret=interpret)
    return call
