"""Pure-JAX delayed delivery: the oracle for every other backend, and the ``jax`` backend.

``csr_delay_deliver_kernel(*, shape, weighted, outs)`` returns ``f(ring,
events, data, indices, indptr, delays, t) -> (ring',)`` with, for every
stored entry ``e`` of every row ``i`` that carries an event,

    ring'[(t + delays[e]) mod L, indices[e]] += data[e] * value(events[i])

where ``L = ring.shape[0]``, ``value`` is 1 (binary) or the event's own value
(weighted; zero entries are not events). An entry is dropped (never read or
written) when it belongs to no row, its column is outside ``[0, n)`` or its
delay outside ``[1, L)``. ``t`` is any integer; ``t mod L`` is taken
floor-wise, so a negative ``t`` counts back from the end. ``indptr`` comes
valid or repaired (the operator's ``prepare``).

The layout form (``csr_delay_deliver_layout_kernel``) reads one packed
offset per synapse instead of its column and delay,
``offsets[e] = delays[e] * n + indices[e]`` (``-1`` for a synapse that no
ring keeps: see :func:`packed_offsets`); it is kept when ``n <= offsets[e] <
L * n`` (so the delay lies in ``[1, L)``), and lands at flat position
``(t mod L) * n + offsets[e]`` wrapped by ``L * n``: the same place.
"""

from __future__ import annotations

import jax.numpy as jnp

from eventjax.kernels.common import accumulation_dtype
from eventjax.kernels.common.checks import repair_indptr

__all__ = ['csr_delay_deliver_kernel', 'csr_delay_deliver_layout_kernel', 'data_cotangent', 'delivery_targets',
           'events_cotangent', 'layout_data_cotangent', 'layout_events_cotangent', 'offset_targets', 'packed_offsets']


def _entry_rows(indptr, nnz: int):
    return jnp.searchsorted(indptr, jnp.arange(nnz, dtype=indptr.dtype), side='right') - 1


def delivery_targets(indices, indptr, delays, t, *, shape, length: int):
    """``(rows, flat, kept)``: each entry's row, its flat ring position ``slot * n + column``, whether it is kept."""
    m, n = shape
    nnz = indices.shape[0]
    rows = _entry_rows(indptr, nnz)
    d = jnp.broadcast_to(delays, (nnz,)).astype(jnp.int32)
    kept = (rows >= 0) & (rows < m) & (indices >= 0) & (indices < n) & (d >= 1) & (d < length)
    now = jnp.mod(t.reshape(()).astype(jnp.int32), length)
    slot = now + d
    slot = jnp.where(slot >= length, slot - length, slot)
    flat = slot * n + indices.astype(jnp.int32)
    return jnp.where(kept, rows, 0), jnp.where(kept, flat, length * n), kept


def packed_offsets(indices, delays, n: int, xp=jnp):
    """``delays * n + indices`` per synapse as int32, ``-1`` where no ring of ``n`` columns could keep it.

    Kept synapses have a column in ``[0, n)`` and a delay in ``[1, D)`` with
    ``D = (2**31 - 1) // n``: every offset then fits int32, and a ring that
    fits int32 positions (``L * n < 2**31``, checked per call) has ``L <= D``,
    so a delay at or past ``D`` would be dropped by any ring anyway. ``xp``
    is ``numpy`` for concrete arrays, ``jax.numpy`` for traced ones.
    """
    nnz = indices.shape[0]
    if n == 0:
        return xp.full((nnz,), -1, xp.int32)
    d, j = xp.broadcast_to(delays, (nnz,)), indices
    # Compared before narrowing to int32, so a wide delay or column cannot wrap into range.
    ok = (j >= 0) & (j < n) & (d >= 1) & (d < (2 ** 31 - 1) // n)
    d, j = xp.where(ok, d, 0).astype(xp.int32), xp.where(ok, j, 0).astype(xp.int32)
    return xp.where(ok, d * xp.int32(n) + j, xp.int32(-1)).astype(xp.int32)


def offset_targets(offsets, indptr, t, *, shape, length: int):
    """:func:`delivery_targets` of packed offsets (:func:`packed_offsets`): the same rows, positions and kept flags."""
    m, n = shape
    nnz = offsets.shape[0]
    rows = _entry_rows(indptr, nnz)
    off = offsets.astype(jnp.int32)
    kept = (rows >= 0) & (rows < m) & (off >= n) & (off < length * n)
    now = jnp.mod(t.reshape(()).astype(jnp.int32), length)
    flat = off - (length - now) * n  # now * n + off - L * n, without passing 2**31
    flat = jnp.where(flat < 0, flat + length * n, flat)
    return jnp.where(kept, rows, 0), jnp.where(kept, flat, length * n), kept


def event_values(x, acc, weighted: bool):
    """``(active, value)`` per event: binary, ``True``/``> 0`` with value 1; weighted, ``!= 0`` with its value."""
    if weighted:
        return (x if x.dtype == jnp.bool_ else x != 0), x.astype(acc)
    return (x if x.dtype == jnp.bool_ else x > 0), jnp.ones(x.shape, acc)


def _deliver_to(ring, events, data, targets, weighted):
    length, n = ring.shape
    acc = accumulation_dtype(ring.dtype)
    rows, flat, kept = targets
    active, value = event_values(events[rows], acc, weighted)
    # Select, never multiply by a 0/1 indicator: a NaN weight without an event adds nothing.
    contrib = jnp.where(kept & active, data.astype(acc) * value, jnp.zeros((), acc))
    contrib = jnp.broadcast_to(contrib, flat.shape)
    out = ring.astype(acc).reshape(-1).at[flat].add(contrib, mode='drop')
    return out.reshape(length, n).astype(ring.dtype)


def _empty(ring, events, nnz):
    return nnz == 0 or ring.shape[0] == 0 or ring.shape[1] == 0 or events.shape[0] == 0


def _deliver(ring, events, data, indices, indptr, delays, t, *, shape, weighted):
    if _empty(ring, events, indices.shape[0]):
        return ring
    targets = delivery_targets(indices, indptr, delays, t, shape=shape, length=ring.shape[0])
    return _deliver_to(ring, events, data, targets, weighted)


def _deliver_layout(ring, events, data, offsets, indptr, t, *, shape, weighted):
    if _empty(ring, events, offsets.shape[0]):
        return ring
    return _deliver_to(ring, events, data, offset_targets(offsets, indptr, t, shape=shape, length=ring.shape[0]),
                       weighted)


def csr_delay_deliver_kernel(*, shape, weighted, outs):
    return lambda *operands: (_deliver(*operands, shape=shape, weighted=weighted),)


def csr_delay_deliver_layout_kernel(*, shape, weighted, outs):
    return lambda *operands: (_deliver_layout(*operands, shape=shape, weighted=weighted),)


def _data_cotangent_at(ct, events, targets, weighted):
    rows, flat, kept = targets
    active, value = event_values(events[rows], ct.dtype, weighted)
    picked = ct.reshape(-1)[jnp.where(kept, flat, 0)]
    return jnp.where(kept & active, picked * value, jnp.zeros((), ct.dtype))


def _events_cotangent_at(ct, data, targets, m):
    rows, flat, kept = targets
    picked = ct.reshape(-1)[jnp.where(kept, flat, 0)] * jnp.broadcast_to(data.astype(ct.dtype), flat.shape)
    return jnp.zeros((m,), ct.dtype).at[jnp.where(kept, rows, m)].add(
        jnp.where(kept, picked, jnp.zeros((), ct.dtype)), mode='drop')


def data_cotangent(ct, events, indices, indptr, delays, t, *, shape, weighted):
    """The cotangent of each stored weight: ``ct[slot, column] * value(events[row])`` (0 when dropped or idle)."""
    length, n = ct.shape
    nnz = indices.shape[0]
    if nnz == 0 or length == 0 or n == 0:
        return jnp.zeros((nnz,), ct.dtype)
    targets = delivery_targets(indices, repair_indptr(indptr, nnz), delays, t, shape=shape, length=length)
    return _data_cotangent_at(ct, events, targets, weighted)


def events_cotangent(ct, data, indices, indptr, delays, t, *, shape, weighted=True):
    """The event values' cotangent (delivery is linear in them): ``sum_e data[e] * ct[slot, column]`` per row."""
    length, n = ct.shape
    nnz = indices.shape[0]
    if nnz == 0 or length == 0 or n == 0:
        return jnp.zeros((shape[0],), ct.dtype)
    targets = delivery_targets(indices, repair_indptr(indptr, nnz), delays, t, shape=shape, length=length)
    return _events_cotangent_at(ct, data, targets, shape[0])


def layout_data_cotangent(ct, events, offsets, indptr, t, *, shape, weighted):
    """:func:`data_cotangent` of the layout form (packed offsets)."""
    length, n = ct.shape
    nnz = offsets.shape[0]
    if nnz == 0 or length == 0 or n == 0:
        return jnp.zeros((nnz,), ct.dtype)
    targets = offset_targets(offsets, repair_indptr(indptr, nnz), t, shape=shape, length=length)
    return _data_cotangent_at(ct, events, targets, weighted)


def layout_events_cotangent(ct, data, offsets, indptr, t, *, shape, weighted=True):
    """:func:`events_cotangent` of the layout form (packed offsets)."""
    length, n = ct.shape
    nnz = offsets.shape[0]
    if nnz == 0 or length == 0 or n == 0:
        return jnp.zeros((shape[0],), ct.dtype)
    targets = offset_targets(offsets, repair_indptr(indptr, nnz), t, shape=shape, length=length)
    return _events_cotangent_at(ct, data, targets, shape[0])
