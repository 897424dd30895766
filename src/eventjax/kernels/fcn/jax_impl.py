"""Fast pure-JAX FCN kernels: the ``jax`` backend (``reference.py`` stays the readable oracle).

With the events on the rows (``transpose=True``) a binary product visits
only the rows that hold an event (:mod:`~eventjax.kernels.common.compaction`)
and scatters their ``k`` connections; the reference scatters all ``m * k``.
The other products touch every connection anyway: the vector gathers
drop out-of-range columns in the gather itself, the rest are the
reference's gather, select and row sum. Semantics are the reference's: connections
outside ``[0, n)`` are dropped, binary products select (never multiply by
0/1), float products are IEEE.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from eventjax.kernels.common import accumulation_dtype
from eventjax.kernels.common.compaction import by_event_count, event_mask
from eventjax.kernels.common.events import product_kernels
from eventjax.kernels.fcn import reference

__all__ = ['SMALL', 'binary_fcnmm_kernel', 'binary_fcnmv_kernel', 'fcnmm_kernel', 'fcnmv_kernel']


def _event_rows(weights, indices, spikes, *, shape, out_dtype):
    """``s @ A`` with events ``s``: the connections of the event rows only.

    Each event ``(i, c)`` of a matrix ``s`` (flattened) adds row ``i``'s
    connections into column ``c`` of the result, so a batch of event
    vectors costs its events, not the rows any of them touch.
    """
    m, n = shape
    acc = accumulation_dtype(out_dtype)
    k = 1 if spikes.ndim == 1 else spikes.shape[1]

    def entries_of(idx):
        rows = jnp.minimum(idx // k, m - 1)
        cols = indices[rows]
        ok = (idx < m * k)[:, None] & (cols >= 0) & (cols < n)
        w = weights.astype(acc)
        w = jnp.broadcast_to(w, cols.shape) if w.shape != indices.shape else w[rows]
        dst = jnp.where(ok, cols * k + (idx % k)[:, None], n * k).reshape(-1)
        terms = jnp.where(ok, w, jnp.zeros((), acc)).reshape(-1)
        return jnp.zeros((n * k,), acc).at[dst].add(terms, mode='drop').reshape((n,) + spikes.shape[1:])

    def every_row():
        return reference._product(weights, indices, spikes, shape=shape, transpose=True, out_dtype=acc, binary=True)

    # Past m events the gathered rows outnumber those of a pass over every row.
    return by_event_count(event_mask(spikes).reshape(-1), entries_of, every_row, limit=m).astype(out_dtype)


def _gather(weights, indices, x, *, n, binary, out_dtype):
    """``A @ x`` with a vector ``x``: per row, the weights of the event columns (binary) or ``w * x[col]``.

    One gather that reads a column outside ``[0, n)`` (negative ones too) as
    no event, or as 0 that a select then drops (a NaN weight there adds
    nothing): ``FILL_OR_DROP`` takes the indices as they are, where the
    reference's clipped copy of them and clamped gather cost XLA:CPU a third
    more.
    """
    acc = accumulation_dtype(out_dtype)
    numbers = jax.lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(0,), start_index_map=(0,))
    xs = jax.lax.gather(event_mask(x) if binary else x, indices[..., None], numbers, slice_sizes=(1,),
                        mode=jax.lax.GatherScatterMode.FILL_OR_DROP, fill_value=False if binary else 0)
    w = jnp.broadcast_to(weights.astype(acc), indices.shape)
    zero = jnp.zeros((), acc)
    if binary:
        terms = jnp.where(xs, w, zero)
    else:
        terms = jnp.where((indices >= 0) & (indices < n), w * xs.astype(acc), zero)
    return terms.sum(axis=1).astype(out_dtype)


# Below this many connections a product takes microseconds any way it is done, and
# the capacities' branches would only add compile time.
SMALL = 32768


def _product(weights, indices, x, *, shape, transpose, out_dtype, binary):
    m, n = shape
    k = 1 if x.ndim == 1 else x.shape[1]
    # The flat (row or column, batch) indices of _event_rows are int32.
    fits = max(m, n) * k < jnp.iinfo(jnp.int32).max
    if binary and transpose and n > 0 and indices.size >= SMALL and fits:
        return _event_rows(weights, indices, x, shape=shape, out_dtype=out_dtype)
    if not transpose and x.ndim == 1 and m > 0 and n > 0 and indices.size >= SMALL:
        return _gather(weights, indices, x, n=n, binary=binary, out_dtype=out_dtype)
    return reference._product(weights, indices, x, shape=shape, transpose=transpose, out_dtype=out_dtype,
                              binary=binary)


# ``A @ x`` (or ``x @ A``), float and event ``x``; the mm kernels are the same functions (2-D ``x``).
fcnmv_kernel, binary_fcnmv_kernel = product_kernels(_product)
fcnmm_kernel = fcnmv_kernel
binary_fcnmm_kernel = binary_fcnmv_kernel
