"""TPU (Mosaic) delivery into large rings: one ring slot per one-hot product.

:mod:`~eventjax.kernels.delay.pallas_tpu` adds each piece of 128 synapses
into the whole ring with one one-hot product, whose cost grows with the
ring (``L * n / 128`` rows per product). Here a product covers one slot: a
synapse's target splits as ``slot``, ``column = 128 * hi + lo``, and a piece
costs one product of ``onehot(hi)`` (``n / 128`` rows, shared by the piece)
by ``coef * onehot(lo)`` per distinct slot among its synapses. A row
sorted by delay (a :class:`~eventjax.CSRDelayLayout`) holds few distinct
delays in 128 neighbouring synapses, so a piece takes one to three
products.

- The one-hot factor of ``hi`` is exact in bfloat16; the weighted factor is
  split into three bfloat16 parts (``w1 = bf16(w)``, ``w2 = bf16(w - w1)``,
  ``w3 = bf16(w - w1 - w2)``, whose sum is ``w`` for normal floats) side
  by side, so one single-pass product (its three result blocks summed)
  gives the float32 result, where ``Precision.HIGHEST`` takes six passes.
- The delivered block (``L`` slots of ``n`` columns rounded up to 1,024)
  stays in VMEM for the call and goes to HBM by one DMA at the end; the
  ring is added outside, in its accumulation dtype, as the ``jax`` kernel
  adds.
- The event rows are compacted in SMEM (a step per 32-event word), and
  their 128-wide pieces are listed ``WORK`` at a time, so the work list
  stays bounded whatever the synapse count; the pieces' synapses come from
  HBM by DMA, eight pieces a batch, overlapping the products.
- A NaN or inf term would reach the whole tile of its product: such terms
  go through the MXU as 0 and are added to their own targets one by one
  (rare: a piece without one costs a reduction), so the result is IEEE's
  as on every backend, and the weights are never scanned outside the
  kernel (at 300 million synapses a scan costs more than the delivery).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from eventjax.kernels.common.events import accumulation_dtype
from eventjax.kernels.common.pallas.tpu_pieces import SMEM_WORDS, in_32_bits, in_batches, in_pieces
from eventjax.kernels.common.pallas.tpu_rows import compact_event_ids, dot_t, packed_flags, tpu_interpret

__all__ = ['PIECES_PER_BATCH', 'WORK', 'deliver', 'fits_the_chip', 'operands', 'piece_copies', 'unpack']

_LANES = 128
# Pieces a DMA batch fetches (two batches in flight).
PIECES_PER_BATCH = 8
# Pieces listed in SMEM at a time (two words each).
WORK = 4096
# The delivered block's VMEM (a v5e core has 128 MiB), and the columns a product's one-hot rows cover.
_MAX_BLOCK_BYTES = 64 * 2 ** 20
_MAX_COLUMNS = 262_144
_VMEM_HEADROOM = 24 * 2 ** 20


def _slot_rows(n: int) -> int:
    """Rows of 128 columns one slot takes in the delivered block: ``n / 128`` rounded up to a multiple of 8."""
    return -(-max(n, 1) // (8 * _LANES)) * 8


def fits_the_chip(*, m: int, n: int, length: int, weighted: bool) -> bool:
    """Whether this kernel's scalars fit SMEM and its delivered block VMEM (else: the jax kernel).

    Example:
        >>> fits_the_chip(m=77_169, n=77_169, length=64, weighted=False)
        True
        >>> fits_the_chip(m=77_169, n=77_169, length=64, weighted=True)
        False
    """
    smem = (m + 1) + m // 32 + 1 + m + (m if weighted else 0) + 2 * WORK + 8
    block = length * _slot_rows(n) * _LANES * 4
    return smem <= SMEM_WORDS and block <= _MAX_BLOCK_BYTES and n <= _MAX_COLUMNS


def _bf16_parts(x):
    """Three bfloat16 parts (as float32) whose sum is ``x``, exactly for normal float32 values."""
    parts = []
    for _ in range(3):
        part = x.astype(jnp.bfloat16).astype(jnp.float32)
        parts.append(part)
        x = x - part
    return parts


def _targets(first, second, now, *, n, length, packed):
    """Each synapse's ``(slot, column, kept)`` from its packed offset (``packed``) or its column and delay."""
    if packed:
        keep = (first >= n) & (first < length * n)
        o = jnp.where(keep, first, n)
        # o // n in float32 is off by at most one at these magnitudes; one step in each direction repairs it.
        d = (o.astype(jnp.float32) * (1.0 / n)).astype(jnp.int32)
        c = o - d * n
        d = jnp.where(c < 0, d - 1, jnp.where(c >= n, d + 1, d))
        c = jnp.where(c < 0, c + n, jnp.where(c >= n, c - n, c))
    else:
        d, c = second, first
        keep = (c >= 0) & (c < n) & (d >= 1) & (d < length)
        d, c = jnp.where(keep, d, 1), jnp.where(keep, c, 0)
    s = now + d
    return jnp.where(s >= length, s - length, s), c, keep


def _body(*, m, n, length, rows, weighted, shared_w, shared_d, packed):
    """Kernel body; refs: indptr, flags, now, [values], [weight], [delay] (SMEM); synapses (HBM); out; scratch."""
    group = PIECES_PER_BATCH

    def body(*refs):
        indptr_ref, flags_ref, now_ref, values_ref, w_scalar, d_scalar, hbm, refs = unpack(
            refs, weighted=weighted, shared_w=shared_w, shared_d=shared_d, packed=packed)
        y_hbm, acc_ref, ids_ref, piece_ref, owner_ref, *bufs = refs
        out_sem = bufs.pop()
        sem = bufs.pop()
        now = now_ref[0]

        def clear(s, carry):
            acc_ref[pl.ds(pl.multiple_of(s * rows, 8), rows), :] = jnp.zeros((rows, _LANES), jnp.float32)
            return carry

        lax.fori_loop(0, length, clear, 0)
        count = compact_event_ids(flags_ref, ids_ref, pl.cdiv(m, 32))

        lane = lax.broadcasted_iota(jnp.int32, (1, _LANES), 1)

        def fill(event, skip):
            """List the pieces of the event rows from ``ids[event]``'s piece ``skip`` on, up to WORK of them."""
            def more(c):
                return (c[0] < WORK) & (c[1] < count)

            def row(c):
                filled, event, skip = c
                i = ids_ref[event]
                start, end = indptr_ref[i], indptr_ref[i + 1]
                first = lax.shift_right_logical(start, 7)
                spans = jnp.where(end > start, lax.shift_right_logical(end - 1, 7) - first + 1, 0)
                take = jnp.minimum(spans - skip, WORK - filled)

                def put(k, carry):
                    piece_ref[filled + k] = first + skip + k
                    owner_ref[filled + k] = i
                    return carry

                lax.fori_loop(0, take, put, 0)
                done = skip + take >= spans
                return filled + take, jnp.where(done, event + 1, event), jnp.where(done, 0, skip + take)

            return lax.while_loop(more, row, (jnp.int32(0), event, skip))

        def segment(c):
            filled, event, skip = fill(c[0], c[1])

            copies = piece_copies(piece_ref, filled, hbm, bufs, sem)

            def one_batch(r, slot):
                for g in range(group):
                    e = jnp.minimum(r * group + g, filled - 1)
                    piece, i = piece_ref[e], owner_ref[e]
                    pos = piece * _LANES + lane
                    keep = (pos >= indptr_ref[i]) & (pos < indptr_ref[i + 1]) & (r * group + g < filled)
                    second = None
                    if not packed:
                        second = (jnp.broadcast_to(d_scalar[0], (1, _LANES)) if shared_d
                                  else bufs[1][slot, pl.ds(g, 1), :])
                    s, c, kept = _targets(bufs[0][slot, pl.ds(g, 1), :], second, now, n=n, length=length,
                                          packed=packed)
                    keep = keep & kept
                    w = w_scalar[0] if shared_w else bufs[-1][slot, pl.ds(g, 1), :]
                    coef = w * values_ref[i] if weighted else w
                    _add_piece(acc_ref, s, c, jnp.where(keep, coef, 0.0), keep, rows=rows, length=length)

            in_batches(lax.div(filled + (group - 1), jnp.int32(group)), copies, one_batch)
            return event, skip

        lax.while_loop(lambda c: c[0] < count, segment, (jnp.int32(0), jnp.int32(0)))
        out = pltpu.make_async_copy(acc_ref, y_hbm, out_sem)
        out.start()
        out.wait()

    return body


def piece_copies(piece_ref, count, hbm, bufs, sem):
    """``copies(r, slot)``: the DMAs of batch ``r``'s pieces (of ``count`` listed in ``piece_ref``) from each HBM
    array into its buffer's ``slot``, eight pieces a batch (the last piece repeats past ``count``)."""
    def copies(r, slot):
        out = []
        for g in range(PIECES_PER_BATCH):
            piece = piece_ref[jnp.minimum(r * PIECES_PER_BATCH + g, count - 1)]
            for a, (src, buf) in enumerate(zip(hbm, bufs)):
                out.append(pltpu.make_async_copy(src.at[pl.ds(piece, 1)], buf.at[slot, pl.ds(g, 1)],
                                                 sem.at[a, slot]))
        return out
    return copies


def _add_piece(acc_ref, s, c, coef, keep, *, rows, length):
    """``acc[s, c] += coef`` over a piece's kept synapses: one one-hot product per distinct slot among them."""
    _add_non_finite(acc_ref, coef, s, c, rows)
    parts = _bf16_parts(jnp.where(jnp.isfinite(coef), coef, 0.0))
    hi_iota = lax.broadcasted_iota(jnp.int32, (rows, 1), 0)
    lo_iota = lax.broadcasted_iota(jnp.int32, (_LANES, 1), 0)
    hit_hi = (hi_iota == lax.shift_right_logical(c, 7)).astype(jnp.float32).astype(jnp.bfloat16)
    hit_lo = lo_iota == lax.bitwise_and(c, _LANES - 1)

    def one_slot(rest):
        # The first remaining slot and its synapses: one product, added into that slot.
        s0 = jnp.min(jnp.where(rest > 0, s, length))
        take = hit_lo & (rest > 0) & (s == s0)
        b = jnp.concatenate([jnp.where(take, p, 0.0).astype(jnp.bfloat16) for p in parts], axis=0)
        out = dot_t(hit_hi, b, False)
        at = pl.ds(pl.multiple_of(s0 * rows, 8), rows)
        acc_ref[at, :] += out[:, :_LANES] + out[:, _LANES:2 * _LANES] + out[:, 2 * _LANES:]
        return jnp.where(s == s0, 0, rest)

    lax.while_loop(lambda rest: jnp.max(rest) > 0, one_slot, keep.astype(jnp.int32))


def _add_non_finite(acc_ref, coef, s, c, rows):
    """``acc[s, c] += coef`` for the lanes whose ``coef`` is NaN or inf, one at a time (the MXU gets them as 0)."""
    special = jnp.logical_not(jnp.isfinite(coef))

    @pl.when(jnp.any(special))
    def _():
        lane = lax.broadcasted_iota(jnp.int32, coef.shape, 1)
        hi = lax.broadcasted_iota(jnp.int32, (rows, _LANES), 0)
        lo = lax.broadcasted_iota(jnp.int32, (rows, _LANES), 1)

        def one(j, carry):
            pick = special & (lane == j)

            @pl.when(jnp.any(pick))
            def _():
                sj = jnp.sum(jnp.where(pick, s, 0))
                cj = jnp.sum(jnp.where(pick, c, 0))
                vj = jnp.sum(jnp.where(pick, coef, 0.0))  # the one picked lane: NaN or inf as it is
                at = pl.ds(pl.multiple_of(sj * rows, 8), rows)
                hit = (hi == lax.shift_right_logical(cj, 7)) & (lo == lax.bitwise_and(cj, _LANES - 1))
                acc_ref[at, :] += jnp.where(hit, vj, 0.0)
            return carry

        lax.fori_loop(0, _LANES, one, 0)


def _int32(a, bound):
    """Columns, delays or offsets as int32; a wider array's values outside ``[0, bound)`` become -1 first."""
    if a.dtype == jnp.int32:
        return a
    return jnp.where((a >= 0) & (a < bound), a, -1).astype(jnp.int32)


def operands(events, data, columns, delays, indptr, t, *, length, n, weighted):
    """What both TPU delivery kernels read: ``(scalars for SMEM, synapse arrays in 128-wide pieces for HBM)``.

    Scalars: indptr, the event flags packed 32 to a word, ``t mod L``, the
    event values (weighted), the shared weight, the shared delay. Pieces:
    the columns (``delays`` None: a layout's packed offsets), the delays,
    the weights, each unless shared. :func:`unpack` splits a body's refs
    the same way.
    """
    shared_w, packed = data.shape[0] == 1, delays is None
    shared_d = not packed and delays.shape[0] == 1
    active = events if events.dtype == jnp.bool_ or not weighted else events != 0
    now = jnp.mod(t.reshape(1), jnp.asarray(length, t.dtype)).astype(jnp.int32)
    scalars = [indptr.astype(jnp.int32), packed_flags(active), now]
    rows = pl.cdiv(columns.shape[0], _LANES)
    if weighted:
        scalars.append(events.astype(jnp.float32))
    if shared_w:
        scalars.append(data.astype(jnp.float32))
    hbm = [in_pieces(_int32(columns, length * n if packed else n), -1, rows)]
    if shared_d:
        scalars.append(_int32(delays, length))
    elif not packed:
        hbm.append(in_pieces(_int32(delays, length), 0, rows))
    if not shared_w:
        hbm.append(in_pieces(data.astype(jnp.float32), 0, rows))
    return scalars, hbm


def unpack(refs, *, weighted, shared_w, shared_d, packed):
    """A body's refs as :func:`operands` passed them: ``(indptr, flags, now, values, weight, delay, pieces, rest)``,
    None for what the call has not."""
    refs = list(refs)
    indptr_ref, flags_ref, now_ref = refs[:3]
    del refs[:3]
    values_ref = refs.pop(0) if weighted else None
    w_scalar = refs.pop(0) if shared_w else None
    d_scalar = refs.pop(0) if shared_d and not packed else None
    hbm = [refs.pop(0)]
    if not packed and not shared_d:
        hbm.append(refs.pop(0))
    if not shared_w:
        hbm.append(refs.pop(0))
    return indptr_ref, flags_ref, now_ref, values_ref, w_scalar, d_scalar, hbm, refs


def deliver(ring, events, data, columns, delays, indptr, t, *, shape, weighted, interpret):
    """The ring after delivering the synapses of ``events``' rows, by this kernel.

    ``delays`` None: ``columns`` are a layout's packed offsets. ``ring``
    must not be float64 and the problem must pass :func:`fits_the_chip`.
    """
    m, n = shape
    length = ring.shape[0]
    rows = _slot_rows(n)
    shared_w, packed = data.shape[0] == 1, delays is None
    shared_d = not packed and delays.shape[0] == 1
    scalars, hbm = operands(events, data, columns, delays, indptr, t, length=length, n=n, weighted=weighted)
    block = length * rows
    scratch = [pltpu.VMEM((block, _LANES), jnp.float32), pltpu.SMEM((max(m, 1),), jnp.int32),
               pltpu.SMEM((WORK,), jnp.int32), pltpu.SMEM((WORK,), jnp.int32)]
    scratch += [pltpu.VMEM((2, PIECES_PER_BATCH, _LANES), a.dtype) for a in hbm]
    scratch += [pltpu.SemaphoreType.DMA((len(hbm), 2)), pltpu.SemaphoreType.DMA(())]
    body = _body(m=m, n=n, length=length, rows=rows, weighted=weighted, shared_w=shared_w, shared_d=shared_d,
                 packed=packed)
    y = pl.pallas_call(
        in_32_bits(body), out_shape=jax.ShapeDtypeStruct((block, _LANES), jnp.float32),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=len(scalars), grid=(1,),
            in_specs=[pl.BlockSpec(memory_space=pl.ANY)] * len(hbm),
            out_specs=pl.BlockSpec(memory_space=pl.ANY),
            scratch_shapes=scratch),
        compiler_params=pltpu.CompilerParams(vmem_limit_bytes=block * _LANES * 4 + _VMEM_HEADROOM),
        interpret=tpu_interpret(interpret),
    )(*scalars, *hbm)
    acc = accumulation_dtype(ring.dtype)
    delivered = y.reshape(length, rows * _LANES)[:, :n]
    return (ring.astype(acc) + delivered.astype(acc)).astype(ring.dtype)
