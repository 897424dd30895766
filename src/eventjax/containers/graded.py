"""Products with graded events: events that carry a value, whose zeros are not events.

``GradedEvents(x)`` (brainevent's ``WeightedArray``) multiplies like the
float vector ``x``, except that a zero entry is skipped, never multiplied:

- the event direction (``x @ W``, presynaptic events into their targets)
  visits only the rows of the non-zero entries, on every backend, through
  the delivery kernels of :func:`~eventjax.csr_delay_deliver` (weighted,
  into a ring of two steps);
- the gather direction (``W @ x``) reads every stored entry, as any gather
  does, with the weights of zero entries of ``x`` masked out;
- derivatives are exact: the product is the linear map ``x -> W.T @ x``
  (its derivative with respect to ``x`` includes the entries that are zero
  now), and the weights' derivative is ``value * cotangent`` per synapse.

So a NaN (or infinite) weight poisons the result only where a non-zero
event reaches it; a float vector ``x`` would give ``NaN * 0 = NaN``.
brainunit Quantities (the weights, the event values or both) come back in
the product of their units, as in every other product.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.custom_derivatives import SymbolicZero

from eventjax.kernels.common.units import attach, split_product
from eventjax.kernels.csr import csrmv
from eventjax.kernels.delay import csr_delay_deliver

__all__ = ['graded_csr_product', 'graded_dense_product']


def _product_dtype(weights, x):
    """The product's dtype: the weights' for integer or bool values, else the wider float (never strict-promoted)."""
    w, v = jnp.dtype(weights.dtype), jnp.dtype(x.dtype)
    if not jnp.issubdtype(w, jnp.floating):
        w = jnp.dtype(jnp.float32)
    if not jnp.issubdtype(v, jnp.floating) or w == v:
        return w
    # The wider float; float16 with bfloat16 meet in float32 (strict promotion allows neither implicitly).
    return w if w.itemsize > v.itemsize else v if v.itemsize > w.itemsize else jnp.dtype(jnp.float32)


def _scatter(data, indices, indptr, x, shape):
    """``x @ A`` over the non-zero rows of ``x`` only: a weighted delivery into a one-step ring."""
    m, n = shape
    dtype = _product_dtype(data, x)
    # A delay of 1 step from t = -1 lands in slot 0 of a two-step ring.
    ring = jnp.zeros((2, n), dtype)
    return csr_delay_deliver(ring, x, data.astype(dtype), indices, indptr, jnp.ones((1,), jnp.int32), -1,
                             shape=shape, weighted=True, validate=False)[0]


def _masked_weights(data, indices, x, dtype):
    """Each stored weight, or 0 where the entry of ``x`` it multiplies is zero."""
    nnz = indices.shape[0]
    picked = x[jnp.clip(indices, 0, max(x.shape[0] - 1, 0))] if x.shape[0] else jnp.zeros((nnz,), x.dtype)
    w = jnp.broadcast_to(data.astype(dtype), (nnz,))
    return jnp.where(picked != 0, w, jnp.zeros((), dtype))


@functools.partial(jax.custom_jvp, nondiff_argnums=(4,))
def _gather(data, indices, indptr, x, shape):
    """``A @ x`` with the weights of zero entries of ``x`` masked out (a NaN weight then meets no zero)."""
    dtype = _product_dtype(data, x)
    return csrmv(_masked_weights(data, indices, x, dtype), indices, indptr, x.astype(dtype), shape=shape,
                 validate=False)


def _gather_jvp(shape, primals, tangents):
    data, indices, indptr, x = primals
    dd, _, _, dx = tangents
    y = _gather(data, indices, indptr, x, shape)
    tangent = jnp.zeros_like(y)
    if not isinstance(dd, SymbolicZero):
        tangent += csrmv(_masked_weights(dd, indices, x, y.dtype), indices, indptr, x.astype(y.dtype), shape=shape,
                         validate=False)
    if not isinstance(dx, SymbolicZero):
        # Exact: the linear map's derivative, the entries of x that are zero now included.
        tangent += csrmv(data.astype(y.dtype), indices, indptr, dx.astype(y.dtype), shape=shape, validate=False)
    return y, tangent


_gather.defjvp(_gather_jvp, symbolic_zeros=True)


def graded_csr_product(data, indices, indptr, x, *, shape, transpose: bool):
    """The product of a stored CSR matrix (``shape``) with graded events ``x`` (1-D, or 2-D: one product per column).

    Example:
        >>> import jax.numpy as jnp
        >>> data, indices, indptr = jnp.array([jnp.nan, 2.]), jnp.array([0, 1]), jnp.array([0, 1, 2])
        >>> graded_csr_product(data, indices, indptr, jnp.array([0., 3.]), shape=(2, 2), transpose=True)
        Array([0., 6.], dtype=float32)
    """
    data, x, unit = split_product(data, x)
    data = jnp.asarray(data).reshape(-1)
    x = jnp.asarray(x)
    size = shape[0] if transpose else shape[1]
    if x.ndim in (1, 2) and x.shape[0] != size:
        # Checked here: the kernels' own message would name the delivery operator they run on.
        raise ValueError(f'GradedEvents product: each event vector must have {size} entries (the '
                         f'{"rows" if transpose else "columns"} of the stored {shape[0]} x {shape[1]} matrix), '
                         f'got {x.shape[0]}.')
    one = (lambda v: _scatter(data, indices, indptr, v, shape)) if transpose else \
        (lambda v: _gather(data, indices, indptr, v, shape))
    if x.ndim == 1:
        return attach(one(x), unit)
    return attach(jax.vmap(one, in_axes=1, out_axes=1)(x), unit)


def _masked_dense(weights, x, dtype):
    keep = (x != 0)[:, None]
    return jnp.sum(jnp.where(keep, weights.astype(dtype) * x.astype(dtype)[:, None], jnp.zeros((), dtype)), axis=0)


@jax.custom_jvp
def _dense(weights, x):
    """``x @ weights`` over the non-zero entries of ``x`` (rows of weights)."""
    return _masked_dense(weights, x, _product_dtype(weights, x))


def _dense_jvp(primals, tangents):
    w, x = primals
    dw, dx = tangents
    y = _dense(w, x)
    tangent = jnp.zeros_like(y)
    if not isinstance(dw, SymbolicZero):
        tangent += _masked_dense(dw, x, y.dtype)
    if not isinstance(dx, SymbolicZero):
        tangent += dx.astype(y.dtype) @ w.astype(y.dtype)
    return y, tangent


_dense.defjvp(_dense_jvp, symbolic_zeros=True)


def graded_dense_product(weights, x, *, transpose: bool):
    """``x @ weights`` (``transpose``) or ``weights @ x`` over the non-zero entries of graded events ``x``.

    Example:
        >>> import jax.numpy as jnp
        >>> graded_dense_product(jnp.array([[jnp.inf, 1.], [2., 3.]]), jnp.array([0., 2.]), transpose=True)
        Array([4., 6.], dtype=float32)
    """
    weights, x, unit = split_product(weights, x)
    w = jnp.asarray(weights)
    w = w if transpose else w.T
    x = jnp.asarray(x)
    if w.ndim != 2:
        raise ValueError(f'GradedEvents product: the weights must be a matrix, got shape {jnp.shape(weights)}.')
    if x.shape[0] != w.shape[0]:
        raise ValueError(f'GradedEvents product: each event vector must have {w.shape[0]} entries (the '
                         f'{"rows" if transpose else "columns"} of the {" x ".join(map(str, jnp.shape(weights)))} '
                         f'weights), got {x.shape[0]}.')
    if x.ndim == 1:
        return attach(_dense(w, x), unit)
    return attach(jax.vmap(_dense, in_axes=(None, 1), out_axes=1)(w, x), unit)
