"""Pure-JAX kernels of the per-synapse products (the ``jax`` backend and the oracle), and their cotangents.

``csr_dt2t`` takes ``(w, indices, indptr, y)`` with ``w`` of shape
``(batch, nnz)`` and ``y`` of shape ``(batch, rows)`` (``(batch, cols)``
when ``transpose``) and returns ``out[b, e] = w[b, e] * y[b, row(e)]``
(``y[b, indices[e]]`` when ``transpose``); an event ``y`` (bool) selects
``w`` instead of multiplying. ``csr_sddmm`` takes ``(a, b, indices,
indptr)`` and returns ``out[e] = a[row(e)] . b[:, indices[e]]``. An entry
that belongs to no row (outside ``[indptr[0], indptr[m])``) or whose column
is outside ``[0, n)`` gives 0 and its cotangents are 0. ``indptr`` arrives
repaired (monotone, inside ``[0, nnz]``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from eventjax.kernels.common.events import accumulation_dtype

__all__ = ['csr_dt2t_kernel', 'csr_sddmm_kernel', 'entry_rows', 'sddmm_cotangent', 'y_cotangent']


def entry_rows(indptr, nnz: int):
    """The row of each stored entry, ``m`` (one past the last row) or -1 for an entry of no row.

    ``indptr`` is monotone: entry ``e``'s row is the number of pointers at or
    before ``e``, less one, a cumulative sum of the pointers' histogram
    (O(nnz); XLA's ``searchsorted`` took 20x longer on the cpu).
    """
    # The barrier keeps XLA from constant-folding the sum when indptr is a jit constant (minutes of compile).
    marks = jnp.zeros((nnz + 1,), jnp.int32).at[jax.lax.optimization_barrier(indptr)].add(1, mode="drop")
    return jnp.cumsum(marks[:nnz]) - 1


def _positions(indices, indptr, *, shape, transpose):
    """``(position, ok)``: where each entry reads ``y`` (its row, or its column when ``transpose``)."""
    m, n = shape
    rows = entry_rows(indptr, indices.shape[0])
    ok = (rows >= 0) & (rows < m)
    if not transpose:
        return jnp.where(ok, rows, 0), ok
    ok = ok & (indices >= 0) & (indices < n)
    return jnp.where(ok, indices, 0).astype(jnp.int32), ok


def csr_dt2t_kernel(*, shape, transpose, events, outs):
    """``kernel(w, indices, indptr, y) -> (out,)``: each stored entry's weight times its row's (column's) ``y``."""
    def kernel(w, indices, indptr, y):
        pos, ok = _positions(indices, indptr, shape=shape, transpose=transpose)
        g = y[:, pos]
        zero = jnp.zeros((), w.dtype)
        value = jnp.where(g, w, zero) if events else w * g.astype(w.dtype)
        return (jnp.where(ok[None, :], value, zero).astype(outs[0].dtype),)
    return kernel


def y_cotangent(ct, w, indices, indptr, *, shape, transpose):
    """The cotangent of ``y``: each entry's ``ct * w`` summed into the position it read."""
    pos, ok = _positions(indices, indptr, shape=shape, transpose=transpose)
    size = shape[1] if transpose else shape[0]
    acc = accumulation_dtype(w.dtype)
    terms = jnp.where(ok[None, :], ct.astype(acc) * w.astype(acc), 0)
    return jnp.zeros((w.shape[0], size), acc).at[:, pos].add(terms).astype(w.dtype)


def csr_sddmm_kernel(*, shape, outs):
    """``kernel(a, bt, indices, indptr) -> (out,)``: ``(a @ bt.T)`` at each stored entry, 0 for a bad entry."""
    def kernel(a, bt, indices, indptr):
        pos_r, _ = _positions(indices, indptr, shape=shape, transpose=False)
        pos_c, ok = _positions(indices, indptr, shape=shape, transpose=True)  # ok: a row and a column
        acc = accumulation_dtype(outs[0].dtype)
        dots = jnp.einsum('ek,ek->e', a[pos_r].astype(acc), bt[pos_c].astype(acc), precision='highest')
        return (jnp.where(ok, dots, 0).astype(outs[0].dtype),)
    return kernel


def sddmm_cotangent(ct, other, indices, indptr, *, shape, side):
    """The cotangent of ``a`` (``side='a'``, from ``other = bt``) or of ``bt`` (``side='b'``, from ``other = a``)."""
    pos_r, _ = _positions(indices, indptr, shape=shape, transpose=False)
    pos_c, ok = _positions(indices, indptr, shape=shape, transpose=True)
    acc = accumulation_dtype(other.dtype)
    c = jnp.where(ok, ct.astype(acc), 0)[:, None]
    if side == 'a':
        return jnp.zeros((shape[0], other.shape[1]), acc).at[pos_r].add(c * other[pos_c].astype(acc))
    return jnp.zeros((shape[1], other.shape[1]), acc).at[pos_c].add(c * other[pos_r].astype(acc))
