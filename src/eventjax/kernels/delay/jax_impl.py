"""The fast pure-JAX delivery: the ``jax`` backend (``reference.py`` stays the readable oracle).

The reference touches every stored entry each step and finds each entry's
row with a binary search over ``indptr``. Here only the rows that hold an
event are visited (:mod:`~eventjax.kernels.common.compaction`): they are
laid out as a padded ``(events, width)`` block, with a static width a
little above the mean row length, and scattered into the flattened ring in
one pass. When an event row is longer than the width, or events are many,
the reference runs instead (``lax.switch``). Semantics are the reference's.
"""

from __future__ import annotations

import jax.numpy as jnp

from eventjax.kernels.common import accumulation_dtype
from eventjax.kernels.common.compaction import by_event_count
from eventjax.kernels.delay import reference

__all__ = ['csr_delay_deliver_kernel']

# Below this many stored entries the layouts' branches would only add compile time.
SMALL = 32768


def _deliver(ring, events, data, indices, indptr, delays, t, *, shape, weighted):
    m, n = shape
    length = ring.shape[0]
    nnz = indices.shape[0]
    if nnz < SMALL or m == 0 or n == 0 or length == 0:
        return reference._deliver(ring, events, data, indices, indptr, delays, t, shape=shape, weighted=weighted)
    acc = accumulation_dtype(ring.dtype)
    active, value = reference.event_values(events, acc, weighted)
    lengths = indptr[1:] - indptr[:-1]
    # 1.25x the mean row length, a multiple of 8: rows of a random graph fit, a skewed one falls back.
    width = -(-(5 * -(-nnz // m)) // 32) * 8
    fits = jnp.max(jnp.where(active, lengths, 0)) <= width
    now = jnp.mod(t.reshape(()).astype(jnp.int32), length)

    def per_entry(a, pos):
        return jnp.broadcast_to(a[0], pos.shape) if a.shape[0] == 1 else a[pos]

    def event_rows(rows):
        safe = jnp.minimum(rows, m - 1)
        start = indptr[safe]
        count = jnp.where(rows < m, indptr[safe + 1] - start, 0)
        slot = jnp.arange(width, dtype=start.dtype)
        ok = slot < count[:, None]
        pos = jnp.where(ok, start[:, None] + slot, 0)
        cols, d = indices[pos], per_entry(delays, pos)
        ok &= (cols >= 0) & (cols < n) & (d >= 1) & (d < length)
        s = now + d
        s = jnp.where(s >= length, s - length, s)
        flat = jnp.where(ok, s * n + cols.astype(jnp.int32), length * n).reshape(-1)
        terms = jnp.where(ok, per_entry(data, pos).astype(acc) * value[safe][:, None], jnp.zeros((), acc))
        out = ring.astype(acc).reshape(-1).at[flat].add(terms.reshape(-1), mode='drop')
        return out.reshape(length, n).astype(ring.dtype)

    def every_row():
        return reference._deliver(ring, events, data, indices, indptr, delays, t, shape=shape, weighted=weighted)

    return by_event_count(active, event_rows, every_row, limit=m, fallback=every_row, use_fallback=~fits)


def csr_delay_deliver_kernel(*, shape, weighted, outs):
    return lambda *operands: (_deliver(*operands, shape=shape, weighted=weighted),)
