"""What the one-hot TPU delivery kernel (:mod:`~eventjax.kernels.delay.pallas_tpu`) reads, and how it fetches it.

:func:`operands` splits a delivery's arguments into scalars for SMEM and
synapse arrays laid out in 128-wide pieces for HBM; :func:`unpack` splits a
kernel body's refs the same way; :func:`piece_copies` are the DMAs of a
batch of pieces, eight at a time (two batches in flight).
"""

from __future__ import annotations

import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from eventjax.kernels.common.pallas.tpu_pieces import in_pieces
from eventjax.kernels.common.pallas.tpu_rows import packed_flags

__all__ = ['PIECES_PER_BATCH', 'as_int32', 'operands', 'piece_copies', 'unpack']

_LANES = 128
# Pieces a DMA batch fetches (two batches in flight).
PIECES_PER_BATCH = 8


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


def as_int32(a, bound):
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
    hbm = [in_pieces(as_int32(columns, length * n if packed else n), -1, rows)]
    if shared_d:
        scalars.append(as_int32(delays, length))
    elif not packed:
        hbm.append(in_pieces(as_int32(delays, length), 0, rows))
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
