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
"""

from __future__ import annotations

import jax.numpy as jnp

from eventjax.kernels.common import accumulation_dtype
from eventjax.kernels.common.checks import repair_indptr

__all__ = ['csr_delay_deliver_kernel', 'data_cotangent', 'delivery_targets', 'events_cotangent']


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


def event_values(x, acc, weighted: bool):
    """``(active, value)`` per event: binary, ``True``/``> 0`` with value 1; weighted, ``!= 0`` with its value."""
    if weighted:
        return (x if x.dtype == jnp.bool_ else x != 0), x.astype(acc)
    return (x if x.dtype == jnp.bool_ else x > 0), jnp.ones(x.shape, acc)


def _deliver(ring, events, data, indices, indptr, delays, t, *, shape, weighted):
    length, n = ring.shape
    acc = accumulation_dtype(ring.dtype)
    if indices.shape[0] == 0 or length == 0 or n == 0 or events.shape[0] == 0:
        return ring
    rows, flat, kept = delivery_targets(indices, indptr, delays, t, shape=shape, length=length)
    active, value = event_values(events[rows], acc, weighted)
    # Select, never multiply by a 0/1 indicator: a NaN weight without an event adds nothing.
    contrib = jnp.where(kept & active, data.astype(acc) * value, jnp.zeros((), acc))
    contrib = jnp.broadcast_to(contrib, flat.shape)
    out = ring.astype(acc).reshape(-1).at[flat].add(contrib, mode='drop')
    return out.reshape(length, n).astype(ring.dtype)


def csr_delay_deliver_kernel(*, shape, weighted, outs):
    return lambda *operands: (_deliver(*operands, shape=shape, weighted=weighted),)


def data_cotangent(ct, events, indices, indptr, delays, t, *, shape, weighted):
    """The cotangent of each stored weight: ``ct[slot, column] * value(events[row])`` (0 when dropped or idle)."""
    length, n = ct.shape
    nnz = indices.shape[0]
    if nnz == 0 or length == 0 or n == 0:
        return jnp.zeros((nnz,), ct.dtype)
    rows, flat, kept = delivery_targets(indices, repair_indptr(indptr, nnz), delays, t, shape=shape, length=length)
    active, value = event_values(events[rows], ct.dtype, weighted)
    picked = ct.reshape(-1)[jnp.where(kept, flat, 0)]
    return jnp.where(kept & active, picked * value, jnp.zeros((), ct.dtype))


def events_cotangent(ct, data, indices, indptr, delays, t, *, shape, weighted=True):
    """The event values' cotangent (delivery is linear in them): ``sum_e data[e] * ct[slot, column]`` per row."""
    m, _ = shape
    length, n = ct.shape
    nnz = indices.shape[0]
    if nnz == 0 or length == 0 or n == 0:
        return jnp.zeros((m,), ct.dtype)
    rows, flat, kept = delivery_targets(indices, repair_indptr(indptr, nnz), delays, t, shape=shape, length=length)
    picked = ct.reshape(-1)[jnp.where(kept, flat, 0)] * jnp.broadcast_to(data.astype(ct.dtype), (nnz,))
    return jnp.zeros((m,), ct.dtype).at[jnp.where(kept, rows, m)].add(
        jnp.where(kept, picked, jnp.zeros((), ct.dtype)), mode='drop')
