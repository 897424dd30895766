"""Pure-JAX FCN kernels: the oracle for every other backend, and the ``jax`` backend.

Row ``i`` of an FCN matrix ``A`` (``shape=(m, n)``) holds ``k`` connections:
``A[i, indices[i, j]] += weights[i, j]`` (duplicates add up). Weights arrive
as ``(m, k)`` or, homogeneous, ``(1, 1)``. Each generator ``kg(*, shape,
transpose, outs)`` returns ``f(weights, indices, x) -> (y,)``.

Out-of-range indices (outside ``[0, n)``) never read or write out of bounds
here: those connections are skipped, the same as the ``warp`` kernels do;
the ``numba`` kernels report them as an error, and ``FixedNumConn.validate()``
is the check before any kernel runs.
"""

from __future__ import annotations

import jax.numpy as jnp

from eventjax.kernels.common import accumulation_dtype, event_indicator

__all__ = ['binary_fcnmm_kernel', 'binary_fcnmv_kernel', 'entry_cotangent', 'fcnmm_kernel', 'fcnmv_kernel']


def _valid(indices, n: int):
    valid = (indices >= 0) & (indices < n)
    return valid, jnp.where(valid, indices, 0)


def _product(weights, indices, x, *, shape, transpose, out_dtype):
    m, n = shape
    acc = accumulation_dtype(out_dtype)
    out_shape = (n if transpose else m,) + x.shape[1:]
    if m == 0 or n == 0 or indices.shape[1] == 0:
        return jnp.zeros(out_shape, out_dtype)
    valid, safe = _valid(indices, n)
    # Homogeneous weights, shape (1, 1), broadcast against every connection.
    w = jnp.where(valid, weights.astype(acc), jnp.zeros((), acc))
    xs = x.astype(acc)
    if not transpose:
        # Gather: y[i] = sum_j w[i, j] x[indices[i, j]].
        gathered = xs[safe]
        y = (w[..., None] * gathered).sum(axis=1) if x.ndim == 2 else (w * gathered).sum(axis=1)
        return y.astype(out_dtype)
    # Scatter: y[indices[i, j]] += w[i, j] x[i]; skipped connections go past the end and drop.
    contrib = w[..., None] * xs[:, None, :] if x.ndim == 2 else w * xs[:, None]
    dst = jnp.where(valid, indices, n)
    y = jnp.zeros(out_shape, acc).at[dst].add(contrib, mode='drop')
    return y.astype(out_dtype)


def fcnmv_kernel(*, shape, transpose, outs):
    """``A @ v`` (or ``v @ A``) with float ``v``; also serves ``fcnmm`` (2-D ``x``)."""
    def kernel(weights, indices, v):
        return (_product(weights, indices, v, shape=shape, transpose=transpose, out_dtype=outs[0].dtype),)
    return kernel


def binary_fcnmv_kernel(*, shape, transpose, outs):
    """``A @ s`` (or ``s @ A``) with events ``s``: each event counts 1, whatever its value."""
    def kernel(weights, indices, spikes):
        x = event_indicator(spikes, accumulation_dtype(outs[0].dtype))
        return (_product(weights, indices, x, shape=shape, transpose=transpose, out_dtype=outs[0].dtype),)
    return kernel


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
