"""Pure-JAX dense kernels: the oracle for every other backend, and the ``jax`` backend.

Each generator ``kg(*, transpose, outs)`` returns ``f(weights, x) -> (y,)``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from eventjax.kernels.common import accumulation_dtype, event_indicator

__all__ = ['binary_densemm_kernel', 'binary_densemv_kernel', 'dense_product', 'weight_cotangent']


def dense_product(weights, x, *, transpose):
    """``weights @ x`` or ``weights.T @ x``, accumulated in float32 for float16."""
    acc = accumulation_dtype(weights.dtype)
    # Contract over the weights' rows directly: materialising weights.T cost
    # 50x on the cpu at 4000 x 4000.
    contract = 0 if transpose else 1
    y = jax.lax.dot_general(weights.astype(acc), x.astype(acc), (((contract,), (0,)), ((), ())))
    return y.astype(weights.dtype)


def binary_densemv_kernel(*, transpose, outs):
    """``W @ s`` (or ``s @ W``) with events ``s``: sums the event columns (rows)."""
    def kernel(weights, spikes):
        return (dense_product(weights, event_indicator(spikes, weights.dtype), transpose=transpose),)
    return kernel


binary_densemm_kernel = binary_densemv_kernel


def float_product(weights, x, *, transpose, backend=None):
    """The float counterpart the derivative w.r.t. the events goes through."""
    return dense_product(weights, x, transpose=transpose)


def weight_cotangent(ct, x, *, transpose):
    """The cotangent of the weight matrix: an outer product (summed over columns for mm)."""
    if x.ndim == 1:
        return jnp.outer(x, ct) if transpose else jnp.outer(ct, x)
    return x @ ct.T if transpose else ct @ x.T
