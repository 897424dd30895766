"""``binary_csrmm_indexed``: a CSR matrix times an event matrix whose event rows are listed (weights permuted)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax

from eventjax.kernels.common.operator import Declaration
from eventjax.kernels.common.units import weights_carry_the_unit
from eventjax.kernels.indexed import reference
from eventjax.kernels.indexed.arguments import check_indexed_mm_call
from eventjax.kernels.indexed.rules import linear_in_data

__all__ = ['binary_csrmm_indexed']

OPERANDS = ('data', 'indices', 'indptr', 'perm', 'ids', 'count', 'B')


@weights_carry_the_unit
def binary_csrmm_indexed(data, indices, indptr, perm, events, *, shape, transpose=False, backend=None,
                         validate=True):
    """Multiply a CSR matrix ``A`` (``shape=(m, n)``) by an event matrix ``B`` whose event rows are listed.

    The product is :func:`binary_csrmm` of ``data[perm]`` (the fused weight
    permutation of :func:`binary_csrmv_indexed`; None: none) with the event
    indicator of ``B`` (``True`` or ``> 0``), restricted to the listed rows of
    ``B``: a row listed ``t`` times counts ``t`` times, an unlisted row not
    at all. ``events`` is ``(ids, count, B)``, ``ids`` and ``count`` from
    :func:`compact_events` of ``B`` (the rows with an event in any column),
    or ``B`` alone, compacted first.

    With ``transpose=True`` (``B`` is ``(m, k)``: a batch of ``k``
    presynaptic spike vectors) every backend visits only the listed rows:
    the cost is count x row length x ``k``, and nothing of ``B`` outside the
    listed rows is read. With ``transpose=False`` every row of ``A`` must be
    read: it runs in JAX on every backend.

    An overflowed list (``count > len(ids)``, possible under ``jit``) makes
    every entry of the result NaN, never a silent drop. The derivative with
    respect to ``data`` is exact; the events have none.

    Args:
        data, indices, indptr, perm, shape, backend, validate: as in :func:`binary_csrmv_indexed`.
        events: ``(ids, count, B)`` or ``B``; ``B`` is ``(m, k)`` (``transpose``) or ``(n, k)``.
        transpose: as in :func:`csrmm`.

    Returns:
        ``(n, k)`` (``(m, k)`` without ``transpose``) in ``data``'s dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> data, indices, indptr = jnp.array([1., 2., 3.]), jnp.array([0, 1, 1]), jnp.array([0, 2, 3])
        >>> B = jnp.array([[False, True], [True, True]])
        >>> ids, count = ej.compact_events(B, 2)
        >>> ej.binary_csrmm_indexed(data, indices, indptr, None, (ids, count, B), shape=(2, 2), transpose=True)
        Array([[0., 1.],
               [3., 5.]], dtype=float32)
    """
    who = 'binary_csrmm_indexed()'
    data, indices, indptr, perm, ids, count, B, shape = check_indexed_mm_call(
        who, data, indices, indptr, perm, events, shape=shape, transpose=transpose, validate=validate)
    m, n = shape
    B = lax.stop_gradient(B)  # events have no derivative
    if transpose and min(m, n, indices.shape[0], ids.shape[0], data.shape[0], B.shape[1]) > 0:
        permuted = perm.shape[0] > 0
        perm = perm if permuted else jnp.zeros((1,), indices.dtype)  # one unread entry, as in the vector product
        wide = data.astype(jnp.float32) if data.dtype == jnp.float16 else data
        return _binary_csrmm_indexed.bind(wide, indices, indptr, perm, ids, count.reshape(1), B, backend=backend,
                                          shape=shape, permuted=permuted).astype(data.dtype)
    y = reference.mm_product(data, indices, indptr, perm, ids, count, B, shape=shape, transpose=transpose,
                             out_dtype=data.dtype)
    return jnp.where(count > ids.shape[0], jnp.array(jnp.nan, y.dtype), y)


def _out(data, indices, indptr, perm, ids, count, B, *, shape, permuted):
    return jax.ShapeDtypeStruct((shape[1], B.shape[1]), data.dtype)


def _cotangent(ct, n_weights, indices, indptr, perm, ids, count, B, *, shape, permuted):
    return reference.mm_weight_cotangent(ct, n_weights, indices, indptr, perm if permuted else perm[:0], ids, count,
                                         B, shape=shape, transpose=True)


_binary_csrmm_indexed = Declaration('binary_csrmm_indexed', __package__, OPERANDS, out=_out,
                                    rules=linear_in_data(_cotangent), kernels=('numba', 'warp', 'pallas'))
