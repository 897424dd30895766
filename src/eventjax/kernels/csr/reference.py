"""Pure-JAX CSR kernels: the oracle for every other backend, and the ``jax`` backend.

Each generator ``kg(*, shape, transpose, outs)`` returns ``f(data, indices,
indptr, x) -> (y,)``. Entries beyond ``indptr[-1]`` are ignored. Invalid
structure (a column index out of range, a non-monotonic ``indptr``) never
reads or writes out of bounds here: gathers clamp and scatters drop
out-of-range targets, as XLA defines them; the result is then unspecified,
and ``CSR.validate()`` is the check.
"""

from __future__ import annotations

import jax.numpy as jnp

from eventjax.kernels.common import accumulation_dtype, event_indicator

__all__ = ['binary_csrmm_kernel', 'binary_csrmv_kernel', 'csrmm_kernel', 'csrmv_kernel', 'entry_rows']


def entry_rows(indptr, nnz: int):
    """The row of each of the ``nnz`` stored entries (``rows`` for entries past the end)."""
    return jnp.searchsorted(indptr, jnp.arange(nnz, dtype=indptr.dtype), side='right') - 1


def _product(data, indices, indptr, x, *, shape, transpose, out_dtype):
    m, n = shape
    acc = accumulation_dtype(out_dtype)
    rows = entry_rows(indptr, indices.shape[0])
    # Homogeneous data, shape (1,), broadcasts against every entry.
    w = data.astype(acc)
    if x.ndim == 2:
        w = w[:, None]
    if x.shape[0] == 0 or indices.shape[0] == 0:
        return jnp.zeros((n if transpose else m,) + x.shape[1:], out_dtype)
    src, dst, size = (rows, indices, n) if transpose else (indices, rows, m)
    # Entries outside [indptr[0], indptr[-1]) belong to no row: send them
    # past the end, where the scatter drops them.
    valid = (rows >= 0) & (rows < m)
    dst = jnp.where(valid, dst, size)
    contrib = w * x.astype(acc)[jnp.where(valid, src, 0)]
    y = jnp.zeros((size,) + x.shape[1:], acc).at[dst].add(contrib, mode='drop')
    return y.astype(out_dtype)


def csrmv_kernel(*, shape, transpose, outs):
    """``A @ v`` (or ``v @ A``) with float ``v``."""
    def kernel(data, indices, indptr, v):
        return (_product(data, indices, indptr, v, shape=shape, transpose=transpose, out_dtype=outs[0].dtype),)
    return kernel


def binary_csrmv_kernel(*, shape, transpose, outs):
    """``A @ s`` (or ``s @ A``) with events ``s``: only event entries count, with value 1."""
    def kernel(data, indices, indptr, spikes):
        x = event_indicator(spikes, accumulation_dtype(outs[0].dtype))
        return (_product(data, indices, indptr, x, shape=shape, transpose=transpose, out_dtype=outs[0].dtype),)
    return kernel


csrmm_kernel = csrmv_kernel
binary_csrmm_kernel = binary_csrmv_kernel


def entry_cotangent(ct, x, indices, indptr, *, shape, transpose):
    """The cotangent of each stored weight: ``ct[row] * x[col]`` (swapped when transposed).

    With a matrix ``x`` the products are summed over its columns. Entries
    that belong to no row get 0.
    """
    m, n = shape
    nnz = indices.shape[0]
    if nnz == 0 or m == 0 or n == 0:
        return jnp.zeros((nnz,), ct.dtype)
    rows = entry_rows(indptr, nnz)
    valid = (rows >= 0) & (rows < m)
    rows = jnp.where(valid, rows, 0)
    out_idx, in_idx = (indices, rows) if transpose else (rows, indices)
    prod = ct[out_idx] * x[in_idx]
    if prod.ndim == 2:
        prod = prod.sum(axis=1)
    return jnp.where(valid, prod, jnp.zeros((), prod.dtype))
