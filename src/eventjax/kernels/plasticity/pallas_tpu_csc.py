"""TPU (Mosaic) kernel of ``csr2csc_on_post``: the stored weights of the event columns, updated piece by piece.

An event column's entries sit anywhere in the CSR weights (one per row
that holds the column), and a DMA moves whole 128-wide pieces (a single
word at an unaligned offset is refused), so the kernel moves the pieces
that hold the entries. The column view (rows and positions, laid out 128
to a row) is walked in the 128-wide pieces that the event columns span
(:mod:`eventjax.kernels.common.pallas.tpu_pieces`), eight a batch, fetched
into SMEM by DMA while the batch before is worked on. For each entry of a
batch the scalar core finds its weight piece in the batch's list (a sparse
set in SMEM: ``listed[slot_of[piece]] == piece``, which needs no
clearing) or lists it and starts its DMA into VMEM; once they are in,
each entry adds the trace at its row (kept in SMEM) to its lane and bounds
it, in turn, so entries that share a piece all reach it; each listed piece
is then written back once, and the writes end before the next batch reads.
Weights that are not float32 and problems too large for SMEM take the
``jax`` kernel.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from eventjax.kernels.common.pallas.tpu_pieces import (
    SMEM_WORDS,
    collect_pieces,
    in_32_bits,
    in_batches,
    in_pieces,
    max_pieces,
)
from eventjax.kernels.common.pallas.tpu_rows import packed_flags, tpu_interpret
from eventjax.kernels.plasticity import jax_impl
from eventjax.kernels.plasticity.pallas_tpu import _bounded
from eventjax.kernels.plasticity.pallas_tpu_csr import piece_batches

__all__ = ['csr2csc_on_post_tpu_kernel', 'fits_smem']

_LANES = 128
_PIECES_PER_BATCH = 8
_ENTRIES = _PIECES_PER_BATCH * _LANES


def fits_smem(*, m: int, n: int, nnz: int, entries: int) -> bool:
    """Whether the trace, the column pointers, the event flags, the work list and the piece table fit in SMEM.

    Example:
        >>> fits_smem(m=20_000, n=20_000, nnz=1_600_000, entries=1_600_000)
        True
        >>> fits_smem(m=200_000, n=200_000, nnz=10, entries=10)
        False
    """
    return (m + n + 1 + n // 32 + 1 + 2 * max_pieces(n, entries) + -(-nnz // _LANES) + 8 * _ENTRIES
            <= SMEM_WORDS)


def _body(*, m, n, nnz, w_min, w_max):
    """Kernel body; refs: indptr, flags, trace (SMEM); weights, rows, positions (HBM); out (HBM); scratch."""
    group = _PIECES_PER_BATCH

    def body(indptr_ref, flags_ref, trace_ref, w_hbm, rows_hbm, pos_hbm, out_hbm, piece_ref, owner_ref,
             rows_buf, pos_buf, slot_of, listed, entry_slot, entry_lane, entry_inc, w_buf, sem_in, sem_w):
        del w_hbm  # aliased: read and written through out_hbm
        count = collect_pieces(n, indptr_ref, flags_ref, piece_ref, owner_ref)
        item, fetches = piece_batches(piece_ref, count, [(rows_hbm, rows_buf), (pos_hbm, pos_buf)], sem_in)

        def piece_copy(j, direction):
            hbm, vmem = out_hbm.at[pl.ds(listed[j], 1)], w_buf.at[j]
            if direction == 'in':
                return pltpu.make_async_copy(hbm, vmem, sem_w.at[0])
            return pltpu.make_async_copy(vmem, hbm, sem_w.at[1])

        lane_iota = lax.broadcasted_iota(jnp.int32, (1, _LANES), 1)

        def one_batch(r, slot):
            def list_piece(g, counts):
                piece, j = piece_ref[item(r, g)], owner_ref[item(r, g)]
                base = piece * _LANES
                lo = jnp.clip(indptr_ref[j] - base, 0, _LANES)
                hi = jnp.where(r * group + g < count, jnp.clip(indptr_ref[j + 1] - base, 0, _LANES), 0)

                def list_entry(lane, counts):
                    k, listed_count = counts
                    row, at = rows_buf[slot, g, lane], pos_buf[slot, g, lane]
                    ok = (row >= 0) & (row < m) & (at >= 0) & (at < nnz)
                    wp = lax.shift_right_logical(jnp.clip(at, 0, nnz - 1), 7)
                    known_slot = slot_of[wp]
                    known = (known_slot >= 0) & (known_slot < listed_count)
                    known &= listed[jnp.clip(known_slot, 0, _ENTRIES - 1)] == wp
                    new = ok & jnp.logical_not(known)

                    @pl.when(new)
                    def _():
                        slot_of[wp] = listed_count
                        listed[listed_count] = wp
                        piece_copy(listed_count, 'in').start()

                    @pl.when(ok)
                    def _():
                        entry_slot[k] = jnp.where(known, known_slot, listed_count)
                        entry_lane[k] = lax.bitwise_and(at, _LANES - 1)
                        entry_inc[k] = trace_ref[row]
                    return k + ok.astype(jnp.int32), listed_count + new.astype(jnp.int32)

                return lax.fori_loop(lo, hi, list_entry, counts)

            k, listed_count = lax.fori_loop(0, group, list_piece, (jnp.int32(0), jnp.int32(0)))

            def wait(direction):
                def one(j, carry):
                    piece_copy(j, direction).wait()
                    return carry
                lax.fori_loop(0, listed_count, one, 0)

            wait('in')

            def update(i, carry):
                s = entry_slot[i]
                w = w_buf[s]
                new = _bounded(w + entry_inc[i], w_min, w_max)
                w_buf[s] = jnp.where(lane_iota == entry_lane[i], new, w)
                return carry

            lax.fori_loop(0, k, update, 0)

            def store(j, carry):
                piece_copy(j, 'out').start()
                return carry

            lax.fori_loop(0, listed_count, store, 0)
            wait('out')  # before the next batch reads any of these pieces

        in_batches(lax.div(count + (group - 1), jnp.int32(group)), fetches, one_batch)

    return body


def _update(weight, rows, indptr, positions, pre_trace, post_spike, *, m, n, w_min, w_max, interpret):
    nnz, entries = weight.shape[0], rows.shape[0]
    w_pieces, view_pieces = -(-nnz // _LANES), -(-entries // _LANES)
    work = max_pieces(n, entries)
    smem = pltpu.SMEM
    out = pl.pallas_call(
        in_32_bits(_body(m=m, n=n, nnz=nnz, w_min=w_min, w_max=w_max)),
        out_shape=jax.ShapeDtypeStruct((w_pieces, _LANES), weight.dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=3, grid=(1,),
            in_specs=[pl.BlockSpec(memory_space=pl.ANY)] * 3,
            out_specs=pl.BlockSpec(memory_space=pl.ANY),
            scratch_shapes=[smem((work,), jnp.int32), smem((work,), jnp.int32),
                            smem((2, _PIECES_PER_BATCH, _LANES), jnp.int32),
                            smem((2, _PIECES_PER_BATCH, _LANES), jnp.int32),
                            smem((w_pieces,), jnp.int32), smem((_ENTRIES,), jnp.int32),
                            smem((_ENTRIES,), jnp.int32), smem((_ENTRIES,), jnp.int32),
                            smem((_ENTRIES,), jnp.float32),
                            pltpu.VMEM((_ENTRIES, 1, _LANES), jnp.float32),
                            pltpu.SemaphoreType.DMA((2, 2)), pltpu.SemaphoreType.DMA((2,))]),
        input_output_aliases={3: 0},  # operand 3 (indptr, flags, trace, then the weights): the result
        interpret=tpu_interpret(interpret),
    )(indptr.astype(jnp.int32), packed_flags(post_spike), pre_trace.astype(jnp.float32),
      in_pieces(weight, 0, w_pieces), in_pieces(rows, -1, view_pieces), in_pieces(positions, -1, view_pieces))
    return out.reshape(-1)[:nnz]


def _int32(a, size):
    """``a`` as int32; a wider value outside ``[0, size)`` becomes -1, so it cannot wrap into range."""
    return a if a.dtype == jnp.int32 else jnp.where((a >= 0) & (a < size), a, -1).astype(jnp.int32)


def csr2csc_on_post_tpu_kernel(*, outs, w_min=None, w_max=None, shape, max_col=None, **static):
    """``call(weight, indices, indptr, weight_indices, pre_trace, post_spike, *, interpret)``: on column events,
    ``weight[weight_indices[c]] += pre_trace[indices[c]]`` for the column's entries ``c``."""
    jax_kernel = jax_impl.csr2csc_on_post_kernel(outs=outs, w_min=w_min, w_max=w_max, max_col=max_col)
    m, n = shape

    def call(weight, indices, indptr, weight_indices, pre_trace, post_spike, *, interpret):
        nnz, entries = weight.shape[0], indices.shape[0]
        if (m == 0 or n == 0 or nnz == 0 or entries == 0 or weight.dtype != jnp.float32
                or not fits_smem(m=m, n=n, nnz=nnz, entries=entries)):
            return jax_kernel(weight, indices, indptr, weight_indices, pre_trace, post_spike)[0]
        return _update(weight, _int32(indices, m), indptr, _int32(weight_indices, nnz), pre_trace, post_spike,
                       m=m, n=n, w_min=w_min, w_max=w_max, interpret=interpret)

    return call
