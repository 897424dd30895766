"""``binary_csrmv_indexed``: a CSR matrix times events given as an index list, with a fused weight permutation."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from eventjax.kernels.common.operator import Declaration
from eventjax.kernels.common.units import weights_carry_the_unit
from eventjax.kernels.indexed import reference
from eventjax.kernels.indexed.arguments import check_indexed_call
from eventjax.kernels.indexed.rules import linear_in_data

__all__ = ['binary_csrmv_indexed']

OPERANDS = ('data', 'indices', 'indptr', 'perm', 'ids', 'count')


@weights_carry_the_unit
def binary_csrmv_indexed(data, indices, indptr, perm, events, *, shape, transpose=False, backend=None,
                         validate=True):
    """Multiply a CSR matrix ``A`` (``shape=(m, n)``) by events given as an index list.

    The product is :func:`binary_csrmv` of ``data[perm]`` (brainevent's
    fused weight permutation: ``perm[k]`` is the position in ``data`` of the
    weight of stored entry ``k``, e.g. a CSC view's entries in CSR order;
    None: no permutation; a homogeneous ``data`` ignores it) with the event
    indicator of the index list. ``events`` is ``(ids, count)`` from
    :func:`compact_events` (an index listed ``t`` times counts ``t`` times;
    indices past ``count`` or outside the event side are ignored) or a
    spike vector, compacted first.

    With ``transpose=True`` (the events are rows: presynaptic spikes into
    postsynaptic currents) every backend visits only the listed rows: the
    cost is count x row length, and nothing of length ``m`` is read. With
    ``transpose=False`` every row must be read: it runs in JAX on every
    backend, from the per-column event counts.

    More events than the list holds (``count > len(ids)``, possible under
    ``jit``) make every entry of the result NaN: an overflow is never a
    silent drop. The derivative with respect to ``data`` is exact; the
    events have none.

    Args:
        data: float weights, one per stored entry (or any length with ``perm``), or one shared scalar.
        indices, indptr: the CSR structure, as in :func:`csrmv`.
        perm: int array of length ``len(indices)``, or None.
        events: ``(ids, count)`` or a spike vector of length ``m`` (``transpose``) or ``n``.
        shape, transpose, backend: as in :func:`csrmv`.
        validate: check concrete structure and ``perm`` by value. False: the
            structure is trusted as valid (rows are then read within the stored
            entries whatever ``indptr`` holds, but invalid row pointers give
            unspecified sums).

    Returns:
        Length ``n`` (``m`` without ``transpose``) in ``data``'s dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> data, indices, indptr = jnp.array([1., 2., 3.]), jnp.array([0, 1, 1]), jnp.array([0, 2, 3])
        >>> ids, count = ej.compact_events(jnp.array([False, True]), 1)
        >>> ej.binary_csrmv_indexed(data, indices, indptr, None, (ids, count), shape=(2, 2), transpose=True)
        Array([0., 3.], dtype=float32)
    """
    who = 'binary_csrmv_indexed()'
    data, indices, indptr, perm, ids, count, shape = check_indexed_call(
        who, data, indices, indptr, perm, events, shape=shape, transpose=transpose, validate=validate)
    m, n = shape
    if transpose and min(m, n, indices.shape[0], ids.shape[0], data.shape[0]) > 0:
        # No permutation travels as one unread entry (a zero-size operand would skip warp's launch).
        permuted = perm.shape[0] > 0
        perm = perm if permuted else jnp.zeros((1,), indices.dtype)
        # float16 sums run in float32 on every backend; warp's atomics would add in the output's dtype.
        wide = data.astype(jnp.float32) if data.dtype == jnp.float16 else data
        y = _binary_csrmv_indexed.bind(wide, indices, indptr, perm, ids, count.reshape(1), backend=backend,
                                       shape=shape, permuted=permuted).astype(data.dtype)
        return y  # the kernels write NaN everywhere for an overflowed list
    # Events on columns (every row is read), or nothing stored: JAX on every backend.
    y = reference.product(data, indices, indptr, perm, ids, count, shape=shape, transpose=transpose,
                          out_dtype=data.dtype)
    return jnp.where(count > ids.shape[0], jnp.array(jnp.nan, y.dtype), y)


def _out(data, *rest, shape, permuted):
    return jax.ShapeDtypeStruct((shape[1],), data.dtype)


def _cotangent(ct, n_weights, indices, indptr, perm, ids, count, *, shape, permuted):
    return reference.weight_cotangent(ct, n_weights, indices, indptr, perm if permuted else perm[:0], ids, count,
                                      shape=shape, transpose=True)


_binary_csrmv_indexed = Declaration('binary_csrmv_indexed', __package__, OPERANDS, out=_out,
                                    rules=linear_in_data(_cotangent), kernels=('numba', 'warp', 'pallas'))
