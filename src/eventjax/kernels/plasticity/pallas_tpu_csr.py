"""TPU (Mosaic) kernel of ``csr_on_pre``: the stored weights of the event rows, updated in place piece by piece.

The weights and the columns are laid out 128 to a row; the event rows are
compacted on the chip into a work list of the aligned 128-wide pieces they
span (:mod:`eventjax.kernels.common.pallas.tpu_pieces`), so rows of any
length take as many pieces as they need. Each piece's weights and columns
are fetched by DMA, eight pieces a batch, the next batch's fetches
overlapping this batch's work; the trace is gathered at the columns as a
one-hot product on the MXU (see :mod:`eventjax.kernels.plasticity.pallas_tpu`)
and added to the entries of the piece's row, bounded.

Rows that share a piece are next to each other in the work list: the
second one takes the first one's updated piece (kept in VMEM) instead of
the one fetched, and only the last of them writes the piece back, so no two
transfers of a piece are ever in flight at once. A NaN or inf trace,
weights that are not float32, and structures too large for SMEM take the
``jax`` kernel.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from eventjax.kernels.common.pallas.tpu_pieces import (
    collect_pieces,
    in_32_bits,
    in_batches,
    in_pieces,
    max_pieces,
    store_and_wait,
)
from eventjax.kernels.common.pallas.tpu_rows import packed_flags, tpu_interpret, with_finite_fallback
from eventjax.kernels.plasticity import jax_impl
from eventjax.kernels.plasticity.pallas_tpu import _bounded, _gathered, _trace_columns, fits_the_chip

__all__ = ['csr_on_pre_tpu_kernel', 'piece_batches']

_LANES = 128
_PIECES_PER_BATCH = 8


def piece_batches(piece_ref, count, pairs, sem):
    """``(item, fetches)`` for :func:`in_batches` over a work list of ``count`` pieces in ``piece_ref``.

    ``item(r, g)``: the work-list index of batch ``r``'s ``g``-th piece (the
    last one past the end); ``fetches(r, slot)``: for each piece of batch
    ``r`` and each ``(hbm, buf)`` of ``pairs``, the DMA of that piece's row
    of ``hbm`` into ``buf[slot, g]``, on ``sem[pair, slot]``.
    """
    group = _PIECES_PER_BATCH

    def item(r, g):
        return jnp.minimum(r * group + g, count - 1)

    def fetches(r, slot):
        return [pltpu.make_async_copy(hbm.at[pl.ds(piece_ref[item(r, g)], 1)], buf.at[slot, pl.ds(g, 1)],
                                      sem.at[p, slot])
                for g in range(group) for p, (hbm, buf) in enumerate(pairs)]

    return item, fetches


def _body(*, m, n, w_min, w_max):
    """Kernel body; refs: indptr, flags (SMEM), trace (VMEM), weights, columns (HBM), out (HBM), scratch."""
    group = _PIECES_PER_BATCH

    def body(indptr_ref, flags_ref, trace_ref, w_hbm, idx_hbm, out_hbm, piece_ref, owner_ref, w_buf, idx_buf,
             prev_ref, sem_in, sem_out):
        del w_hbm  # aliased: read and written through out_hbm
        count = collect_pieces(m, indptr_ref, flags_ref, piece_ref, owner_ref)
        item, fetches = piece_batches(piece_ref, count, [(out_hbm, w_buf), (idx_hbm, idx_buf)], sem_in)

        hi_rows = trace_ref.shape[1]
        hi_iota = lax.broadcasted_iota(jnp.int32, (hi_rows, _LANES), 0)
        lo_iota = lax.broadcasted_iota(jnp.int32, (_LANES, _LANES), 0)
        lane = lax.broadcasted_iota(jnp.int32, (1, _LANES), 1)
        trace_t = trace_ref[...]

        def one_batch(r, slot):
            stores = []
            for g in range(group):
                e = item(r, g)
                valid = r * group + g < count
                piece, i = piece_ref[e], owner_ref[e]
                # The row before shared this piece: its update is the piece's current content.
                shared = (e > 0) & (piece_ref[jnp.maximum(e - 1, 0)] == piece)
                w = jnp.where(jnp.broadcast_to(shared, (1, _LANES)), prev_ref[...], w_buf[slot, pl.ds(g, 1), :])
                t = idx_buf[slot, pl.ds(g, 1), :]
                pos = piece * _LANES + lane
                keep = (pos >= indptr_ref[i]) & (pos < indptr_ref[i + 1]) & (t >= 0) & (t < n) & valid
                new = jnp.where(keep, _bounded(w + _gathered(trace_t, t, hi_iota, lo_iota), w_min, w_max), w)
                prev_ref[...] = new
                w_buf[slot, pl.ds(g, 1), :] = new
                last = valid & ((e == count - 1) | (piece_ref[jnp.minimum(e + 1, count - 1)] != piece))
                stores.append((last, pltpu.make_async_copy(w_buf.at[slot, pl.ds(g, 1)], out_hbm.at[pl.ds(piece, 1)],
                                                           sem_out.at[slot])))
            store_and_wait(stores)  # before the slot is fetched into again, two batches on

        in_batches(lax.div(count + (group - 1), jnp.int32(group)), fetches, one_batch)

    return body


def _update(weight, indices, indptr, pre_spike, post_trace, *, n, w_min, w_max, interpret):
    m, nnz = pre_spike.shape[0], weight.shape[0]
    rows = -(-nnz // _LANES)
    trace, trace_spec = _trace_columns(post_trace.astype(jnp.float32), n)
    work = max_pieces(m, nnz)
    out = pl.pallas_call(
        in_32_bits(_body(m=m, n=n, w_min=w_min, w_max=w_max)),
        out_shape=jax.ShapeDtypeStruct((rows, _LANES), weight.dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=2, grid=(1,),
            in_specs=[trace_spec] + [pl.BlockSpec(memory_space=pl.ANY)] * 2,
            out_specs=pl.BlockSpec(memory_space=pl.ANY),
            scratch_shapes=[pltpu.SMEM((work,), jnp.int32), pltpu.SMEM((work,), jnp.int32),
                            pltpu.VMEM((2, _PIECES_PER_BATCH, _LANES), jnp.float32),
                            pltpu.VMEM((2, _PIECES_PER_BATCH, _LANES), jnp.int32),
                            pltpu.VMEM((1, _LANES), jnp.float32),
                            pltpu.SemaphoreType.DMA((2, 2)), pltpu.SemaphoreType.DMA((2,))]),
        input_output_aliases={3: 0},  # operand 3 (indptr, flags, trace, then the weights): the result
        interpret=tpu_interpret(interpret),
    )(indptr.astype(jnp.int32), packed_flags(pre_spike), trace, in_pieces(weight, 0, rows),
      in_pieces(indices.astype(jnp.int32), -1, rows))
    return out.reshape(-1)[:nnz]


def csr_on_pre_tpu_kernel(*, outs, w_min=None, w_max=None, shape, max_row=None, **static):
    """``call(weight, indices, indptr, pre_spike, post_trace, *, interpret)``: on row events,
    ``weight[k] += post_trace[indices[k]]`` for the row's entries ``k``."""
    jax_kernel = jax_impl.csr_on_pre_kernel(outs=outs, w_min=w_min, w_max=w_max, max_row=max_row)
    m, n = shape

    def call(weight, indices, indptr, pre_spike, post_trace, *, interpret):
        nnz = weight.shape[0]

        def fallback():
            return jax_kernel(weight, indices, indptr, pre_spike, post_trace)[0]

        if m == 0 or n == 0 or nnz == 0:
            return fallback()
        if weight.dtype != jnp.float32 or not fits_the_chip(m=m, n=n, k=_LANES, gather=True,
                                                            pieces=max_pieces(m, nnz)):
            return fallback()
        if indices.dtype != jnp.int32:  # a wider column outside [0, n) must not wrap into range
            indices = jnp.where((indices >= 0) & (indices < n), indices, -1)

        def kernel():
            return _update(weight, indices, indptr, pre_spike, post_trace, n=n, w_min=w_min, w_max=w_max,
                           interpret=interpret)

        return with_finite_fallback(kernel, fallback, post_trace)

    return call
