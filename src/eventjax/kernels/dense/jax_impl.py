"""Fast pure-JAX dense event kernels: the ``jax`` backend (``reference.py`` stays the readable oracle).

``s @ W`` (``transpose=True``) gathers only the rows of ``W`` that hold an
event and adds them up (:mod:`~eventjax.kernels.common.compaction`): no
product, so a weight without an event contributes nothing, NaN or inf
included. ``W @ s`` reads every weight anyway (a gather of the event columns
is strided and measured slower than the product on XLA:CPU), so it is one
matrix product with the 0/1 events; a non-finite weight, selected or not,
makes the result non-finite, and only then does the reference's exact
(three-product) path run. A full pass to check the weights first, or a
select over all of them, cost XLA:CPU several times the product itself.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from eventjax.kernels.common import accumulation_dtype
from eventjax.kernels.common.compaction import by_event_count, event_mask
from eventjax.kernels.dense import reference

__all__ = ['SMALL', 'binary_densemm_kernel', 'binary_densemv_kernel', 'binary_product']


# Below this many weights a product takes microseconds any way it is done, and the
# capacities' branches would only add compile time.
SMALL = 65536


def _event_rows(weights, spikes, acc):
    """``s @ W``: the sum of the event rows of ``W`` (per column of ``s`` for a matrix)."""
    m, n = weights.shape
    events = event_mask(spikes)
    exact = lambda: reference.binary_product(weights, spikes, transpose=True).astype(acc)
    if spikes.ndim == 1:
        def rows_of(idx):
            rows = weights[jnp.minimum(idx, m - 1)].astype(acc)
            return jnp.where((idx < m)[:, None], rows, jnp.zeros((), acc)).sum(axis=0)
        return by_event_count(events, rows_of, exact)
    k = spikes.shape[1]

    def entries_of(idx):
        # Event (i, c) of the flattened events adds row i of W into column c of the result.
        rows = weights[jnp.minimum(idx // k, m - 1)].astype(acc)
        col = jnp.where(idx < m * k, idx % k, k)
        return jnp.zeros((k, n), acc).at[col].add(rows, mode='drop').T
    # At most m gathered rows: past that, the product reads less.
    return by_event_count(events.reshape(-1), entries_of, exact, limit=m)


def _checked_product(weights, spikes, acc):
    """``W @ s`` as one product with the 0/1 events, exact (select) only when the result is not finite."""
    y = jax.lax.dot_general(weights.astype(acc), event_mask(spikes).astype(acc), (((1,), (0,)), ((), ())))
    exact = lambda: reference.binary_product(weights, spikes, transpose=False).astype(acc)
    return jax.lax.cond(jnp.all(jnp.isfinite(y)), lambda: y, exact)


def binary_product(weights, spikes, *, transpose):
    """The sum of the weights of the events (rows of them when ``transpose``).

    Example:
        >>> w = jnp.array([[jnp.nan, 1.0], [2.0, 3.0]])
        >>> binary_product(w, jnp.array([False, True]), transpose=False)
        Array([1., 3.], dtype=float32)
    """
    if weights.size < SMALL or 0 in spikes.shape:
        return reference.binary_product(weights, spikes, transpose=transpose)
    acc = accumulation_dtype(weights.dtype)
    if not transpose:
        y = _checked_product(weights, spikes, acc)
    elif spikes.size < jnp.iinfo(jnp.int32).max:  # the flat (row, batch) event index is int32
        y = _event_rows(weights, spikes, acc)
    else:
        y = reference.binary_product(weights, spikes, transpose=True)
    return y.astype(weights.dtype)


def binary_densemv_kernel(*, transpose, outs):
    """``W @ s`` (or ``s @ W``) with events ``s``: sums the event columns (rows)."""
    def kernel(weights, spikes):
        return (binary_product(weights, spikes, transpose=transpose),)
    return kernel


binary_densemm_kernel = binary_densemv_kernel
