"""Pure-JAX dense kernels: the oracle for every other backend, and the ``jax`` backend.

Each generator ``kg(*, transpose, outs)`` returns ``f(weights, x) -> (y,)``.
A weight without an event contributes nothing, NaN or inf included (the
sum selects the event weights; it never multiplies a weight by 0).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from eventjax.kernels.common import accumulation_dtype, event_indicator
from eventjax.kernels.common.events import product_kernels

__all__ = ['binary_densemm_kernel', 'binary_densemv_kernel', 'binary_product', 'dense_product', 'weight_cotangent']


def _contract(weights, x, transpose):
    # Contract over the weights' rows directly: materialising weights.T cost
    # 50x on the cpu at 4000 x 4000.
    contract = 0 if transpose else 1
    # HIGHEST: full float32 on a TPU too (its default is one bfloat16 pass).
    return jax.lax.dot_general(weights, x, (((contract,), (0,)), ((), ())), precision=jax.lax.Precision.HIGHEST)


def dense_product(weights, x, *, transpose):
    """``weights @ x`` or ``weights.T @ x``, accumulated in float32 for float16."""
    acc = accumulation_dtype(weights.dtype)
    return _contract(weights.astype(acc), x.astype(acc), transpose).astype(weights.dtype)


def binary_product(weights, spikes, *, transpose):
    """The sum of the weights of the events (rows of them when ``transpose``).

    A matrix product with the 0/1 event indicator when every weight is
    finite; otherwise the non-finite weights are taken out of the product
    and put back only where an event selects them (``NaN * 0`` would be NaN).

    Example:
        >>> w = jnp.array([[jnp.nan, 1.0], [2.0, 3.0]])
        >>> binary_product(w, jnp.array([False, True]), transpose=False)
        Array([1., 3.], dtype=float32)
    """
    acc = accumulation_dtype(weights.dtype)
    w, ind = weights.astype(acc), event_indicator(spikes, acc)
    finite = jnp.isfinite(w)

    def with_non_finite():
        y = _contract(jnp.where(finite, w, jnp.zeros((), acc)), ind, transpose)
        hit = lambda mask: _contract(mask.astype(acc), ind, transpose) > 0
        nan, pos, neg = hit(jnp.isnan(w)), hit(w == jnp.inf), hit(w == -jnp.inf)
        y = jnp.where(pos, jnp.inf, jnp.where(neg, -jnp.inf, y))
        return jnp.where(nan | (pos & neg), jnp.nan, y).astype(acc)

    y = jax.lax.cond(finite.all(), lambda: _contract(w, ind, transpose), with_non_finite)
    return y.astype(weights.dtype)


# ``W @ s`` (or ``s @ W``) with events ``s``: sums the event columns (rows); the mm kernel is the same.
_, binary_densemv_kernel = product_kernels(lambda w, s, *, transpose, out_dtype, binary:
                                           binary_product(w, s, transpose=transpose))
binary_densemm_kernel = binary_densemv_kernel


def float_product(weights, x, *, transpose, backend=None):
    """The float counterpart the derivative w.r.t. the events goes through."""
    return dense_product(weights, x, transpose=transpose)


def weight_cotangent(ct, x, *, transpose):
    """The cotangent of the weight matrix: an outer product (summed over columns for mm)."""
    if x.ndim == 1:
        return jnp.outer(x, ct) if transpose else jnp.outer(ct, x)
    return x @ ct.T if transpose else ct @ x.T
