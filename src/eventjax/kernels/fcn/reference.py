"""Pure-JAX FCN kernels: the oracle for every other backend, and the ``jax`` backend.

Row ``i`` of an FCN matrix ``A`` (``shape=(m, n)``) holds ``k`` connections:
``A[i, indices[i, j]] += weights[i, j]`` (duplicates add up). Weights arrive
as ``(m, k)`` or, homogeneous, ``(1, 1)``. Each generator ``kg(*, shape,
transpose, outs)`` returns ``f(weights, indices, x) -> (y,)``.

A connection whose index lies outside ``[0, n)`` is dropped, as on every
backend: never read or written, it contributes nothing (negative indices are
not wrapped). Binary products select the weights of event connections (a
NaN weight without an event adds nothing); float products are IEEE products
over the stored connections.
"""

from __future__ import annotations

import jax.numpy as jnp

from eventjax.kernels.common import accumulation_dtype
from eventjax.kernels.common.events import product_kernels, stored_terms

__all__ = ['binary_fcnmm_kernel', 'binary_fcnmv_kernel', 'entry_cotangent', 'fcnmm_kernel', 'fcnmv_kernel']


def _valid(indices, n: int):
    valid = (indices >= 0) & (indices < n)
    return valid, jnp.where(valid, indices, 0)


def _product(weights, indices, x, *, shape, transpose, out_dtype, binary):
    m, n = shape
    acc = accumulation_dtype(out_dtype)
    out_shape = (n if transpose else m,) + x.shape[1:]
    if m == 0 or n == 0 or indices.shape[1] == 0:
        return jnp.zeros(out_shape, out_dtype)
    valid, safe = _valid(indices, n)
    # Homogeneous weights, shape (1, 1), broadcast against every connection.
    w = jnp.broadcast_to(weights.astype(acc), indices.shape)
    # x[safe]: gather (m, k[, c]) when not transposed; x[:, None] otherwise.
    xs = x[safe] if not transpose else jnp.broadcast_to(x[:, None], indices.shape + x.shape[1:])
    if x.ndim == 2:
        w, valid = w[..., None], valid[..., None]
    contrib = stored_terms(w, xs, valid, binary=binary, acc=acc)
    if not transpose:
        return contrib.sum(axis=1).astype(out_dtype)
    # Scatter: y[indices[i, j]] += contrib[i, j]; dropped connections go past the end.
    dst = jnp.where(valid if x.ndim == 1 else valid[..., 0], indices, n)
    y = jnp.zeros(out_shape, acc).at[dst].add(contrib, mode='drop')
    return y.astype(out_dtype)


# ``A @ x`` (or ``x @ A``), float and event ``x``; the mm kernels are the same functions (2-D ``x``).
fcnmv_kernel, binary_fcnmv_kernel = product_kernels(_product)
fcnmm_kernel = fcnmv_kernel
binary_fcnmm_kernel = binary_fcnmv_kernel


def entry_cotangent(ct, x, indices, *, shape, transpose):
    """The cotangent of each weight ``(m, k)``: ``ct[i] * x[indices[i, j]]`` (swapped when transposed).

    With a matrix ``x`` the products are summed over its columns; skipped
    (out-of-range) connections get 0.
    """
    m, n = shape
    if m == 0 or n == 0 or indices.shape[1] == 0:
        return jnp.zeros(indices.shape, ct.dtype)
    valid, safe = _valid(indices, n)
    row_side, col_side = (x, ct) if transpose else (ct, x)
    prod = row_side[:, None] * col_side[safe]
    if prod.ndim == 3:
        prod = prod.sum(axis=2)
    return jnp.where(valid, prod, jnp.zeros((), prod.dtype))
