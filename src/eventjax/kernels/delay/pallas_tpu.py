"""TPU (Mosaic) kernels of delayed delivery: ``csr_delay_deliver`` and its layout form.

A delivery is a scatter into the flattened ring: synapse ``e`` of an event
row lands at ``slot * n + column`` with ``slot = (t + delay) mod L``. The TPU
has no vector scatter and no atomics, so the kernel works as the CSR
product's does (:mod:`eventjax.kernels.common.pallas.tpu_rows`):

- the event rows are compacted on the chip into a work list of the aligned
  128-wide rows of entries each one spans (any row length, in as many
  pieces as it needs);
- each piece's columns, delays and weights (the layout form: packed offsets
  and weights) are fetched from HBM by DMAs driven by the work list, eight
  pieces a batch, the next batch's transfers overlapping this batch's sums;
- each piece's targets are computed in vector registers (slot arithmetic, or
  the packed offset shifted by ``t``) and added into a VMEM-resident
  ``(L * n / 128, 128)`` block of the ring as a one-hot product on the MXU,
  with the target split as ``128 * hi + lo``.

The kernel returns what was delivered; the ring is added outside, in the
accumulation dtype, as the ``jax`` kernel adds. NaN or inf weights (or
weighted event values) would reach the targets sharing their MXU tile, so
such inputs take the ``jax`` kernel, as do float64 rings and structures too
large for SMEM. Rings over ``MAX_TARGETS`` entries go to
:mod:`~eventjax.kernels.delay.pallas_tpu_sorted` (the update's synapses
sorted by target, a small product per 512 of them), and past its limits to
the ``jax`` kernel.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from eventjax.kernels.common.events import accumulation_dtype
from eventjax.kernels.common.pallas.tpu_pieces import SMEM_WORDS, collect_pieces, in_batches, max_pieces
from eventjax.kernels.common.pallas.tpu_rows import dot_t, one_program, with_finite_fallback
from eventjax.kernels.delay import jax_impl, pallas_tpu_operands, pallas_tpu_sorted

__all__ = ['MAX_TARGETS', 'csr_delay_deliver_layout_tpu_kernel', 'csr_delay_deliver_tpu_kernel', 'fits_the_chip']

_LANES = 128
_PIECES_PER_BATCH = pallas_tpu_operands.PIECES_PER_BATCH  # piece_copies fetches this many a batch
# The delivered block lives in VMEM (2 MiB at this size), beside a batch's one-hot temporaries of its
# size: past about 750,000 targets Mosaic runs out of scoped VMEM on a v5e.
MAX_TARGETS = 524_288


def fits_the_chip(*, m: int, nnz: int, length: int, n: int) -> bool:
    """Whether a delivery's kernel fits the chip's on-core memories (else: the jax kernel).

    Example:
        >>> fits_the_chip(m=4000, nnz=320_000, length=16, n=4000)
        True
        >>> fits_the_chip(m=77_000, nnz=300_000_000, length=16, n=77_000)
        False
    """
    return length * n <= MAX_TARGETS and 2 * max_pieces(m, nnz) + 2 * m + m // 32 + 8 <= SMEM_WORDS


def _body(*, m, n, length, hi_rows, weighted, shared_w, shared_d, packed):
    """Kernel body; refs: indptr, flags, now, [values], [weight], [delay] (SMEM); entries (HBM); y; scratch."""
    group = _PIECES_PER_BATCH

    def body(*refs):
        indptr_ref, flags_ref, now_ref, values_ref, w_scalar, d_scalar, hbm, refs = pallas_tpu_operands.unpack(
            refs, weighted=weighted, shared_w=shared_w, shared_d=shared_d, packed=packed)
        y_ref, piece_ref, owner_ref, *bufs = refs
        sem = bufs.pop()
        now = now_ref[0]

        count = collect_pieces(m, indptr_ref, flags_ref, piece_ref, owner_ref)
        y_ref[...] = jnp.zeros(y_ref.shape, y_ref.dtype)

        copies = pallas_tpu_operands.piece_copies(piece_ref, count, hbm, bufs, sem)

        hi_iota = lax.broadcasted_iota(jnp.int32, (hi_rows, 1), 0)
        lo_iota = lax.broadcasted_iota(jnp.int32, (_LANES, 1), 0)
        lane = lax.broadcasted_iota(jnp.int32, (1, _LANES), 1)

        def one_batch(r, slot):
            total = jnp.zeros(y_ref.shape, jnp.float32)
            for g in range(group):
                e = jnp.minimum(r * group + g, count - 1)
                row, i = piece_ref[e], owner_ref[e]
                pos = row * _LANES + lane
                keep = (pos >= indptr_ref[i]) & (pos < indptr_ref[i + 1]) & (r * group + g < count)
                first = bufs[0][slot, pl.ds(g, 1), :]
                if packed:
                    keep = keep & (first >= n) & (first < length * n)
                    target = first - (length - now) * n  # now * n + offset - L * n stays within int32
                    target = jnp.where(target < 0, target + length * n, target)
                else:
                    d = jnp.broadcast_to(d_scalar[0], (1, _LANES)) if shared_d else bufs[1][slot, pl.ds(g, 1), :]
                    keep = keep & (first >= 0) & (first < n) & (d >= 1) & (d < length)
                    s = now + d
                    target = jnp.where(s >= length, s - length, s) * n + first
                w = w_scalar[0] if shared_w else bufs[-1][slot, pl.ds(g, 1), :]
                coef = w * values_ref[i] if weighted else w
                coef = jnp.where(keep, coef, 0.0)
                target = jnp.where(keep, target, 0)
                a = jnp.where(hi_iota == lax.shift_right_logical(target, 7), coef, 0.0)
                b = (lo_iota == lax.bitwise_and(target, _LANES - 1)).astype(jnp.float32)
                total = total + dot_t(a, b, True)
            y_ref[...] += total

        in_batches(lax.div(count + (group - 1), jnp.int32(group)), copies, one_batch)

    return body


def _deliver(ring, events, data, columns, delays, indptr, t, *, shape, weighted, interpret):
    """What the delivery adds into ``ring`` (flattened, float32), by the kernel; ``delays`` None: packed offsets."""
    m, n = shape
    length = ring.shape[0]
    nnz = columns.shape[0]
    hi_rows = max(1, pl.cdiv(length * n, _LANES))
    shared_w, packed = data.shape[0] == 1, delays is None
    shared_d = not packed and delays.shape[0] == 1
    scalars, hbm = pallas_tpu_operands.operands(events, data, columns, delays, indptr, t, length=length, n=n,
                                            weighted=weighted)
    work = max_pieces(m, nnz)
    scratch = [pltpu.SMEM((work,), jnp.int32), pltpu.SMEM((work,), jnp.int32)]
    scratch += [pltpu.VMEM((2, _PIECES_PER_BATCH, _LANES), a.dtype) for a in hbm]
    scratch.append(pltpu.SemaphoreType.DMA((len(hbm), 2)))
    body = _body(m=m, n=n, length=length, hi_rows=hi_rows, weighted=weighted, shared_w=shared_w,
                 shared_d=shared_d, packed=packed)
    y = one_program(body, hi_rows=hi_rows, dtype=jnp.float32, scalars=scalars, hbm=hbm, scratch=scratch,
                    interpret=interpret)
    return y.reshape(-1)[:length * n]


def _call(*, shape, weighted, fallback):
    m, n = shape

    def call(ring, events, data, columns, indptr, delays, t, *, interpret):
        length = ring.shape[0]
        nnz = columns.shape[0]
        if m == 0 or n == 0 or length == 0 or nnz == 0:
            return ring
        if ring.dtype == jnp.float64:
            return fallback()
        if not fits_the_chip(m=m, nnz=nnz, length=length, n=n):
            if not pallas_tpu_sorted.fits_the_chip(n=n, length=length):
                return fallback()
            return pallas_tpu_sorted.deliver(ring, events, data, columns, delays, indptr, t, shape=shape,
                                             weighted=weighted, interpret=interpret)
        acc = accumulation_dtype(ring.dtype)

        def kernel():
            y = _deliver(ring, events, data, columns, delays, indptr, t, shape=shape, weighted=weighted,
                         interpret=interpret)
            return (ring.astype(acc).reshape(-1) + y.astype(acc)).reshape(ring.shape).astype(ring.dtype)

        checked = [data] + ([events] if weighted and events.dtype != jnp.bool_ else [])
        return with_finite_fallback(kernel, fallback, *checked)

    return call


def csr_delay_deliver_tpu_kernel(*, shape, weighted, outs):
    """``call(ring, events, data, indices, indptr, delays, t, *, interpret)`` for the pallas bridge on tpu."""
    def call(ring, events, data, indices, indptr, delays, t, *, interpret):
        def fallback():
            return jax_impl._deliver(ring, events, data, indices, indptr, delays, t, shape=shape, weighted=weighted)
        return _call(shape=shape, weighted=weighted, fallback=fallback)(ring, events, data, indices, indptr, delays,
                                                                        t, interpret=interpret)
    return call


def csr_delay_deliver_layout_tpu_kernel(*, shape, weighted, outs):
    """``call(ring, events, data, offsets, indptr, t, *, interpret)`` for the pallas bridge on tpu."""
    def call(ring, events, data, offsets, indptr, t, *, interpret):
        def fallback():
            return jax_impl._deliver_layout(ring, events, data, offsets, indptr, t, shape=shape, weighted=weighted)
        return _call(shape=shape, weighted=weighted, fallback=fallback)(ring, events, data, offsets, indptr, None,
                                                                        t, interpret=interpret)
    return call
