"""Argument checks shared by the FCN operators: shapes and dtypes, and concrete indices by value."""

from __future__ import annotations

from eventjax.kernels.common.checks import (
    check_index_array,
    check_index_capacity,
    check_length,
    check_product_operand,
    check_rank,
    check_shape,
    check_transpose,
    check_weights,
    is_concrete,
    validate_fcn_indices,
)
from eventjax.kernels.common.units import attach, split_product

__all__ = ['check_fcn_call', 'checked_call']


def check_fcn_call(who, weights, indices, x, *, shape, transpose, matrix, events, validate=True):
    """Validate an FCN product's operands; returns ``(weights, indices, x, shape)``.

    ``indices`` is ``(m, k)``: row ``i`` connects to columns ``indices[i]``.
    ``weights`` comes back as ``(m, k)``, or as ``(1, 1)`` when homogeneous
    (given as a scalar or shape ``(1,)``), so every kernel sees rank 2. A
    float product casts the weights and ``x`` to their promoted dtype (JAX's
    rules); a binary one keeps the weights' dtype. Concrete indices are
    checked by value when ``validate``; traced ones are dropped where out of
    range, by every backend alike.
    """
    m, n = check_shape(who, shape)
    check_transpose(who, transpose)
    indices = check_index_array(who, 'indices', indices, rank=2)
    check_index_capacity(who, (m, n), indices.dtype)
    check_length(who, 'indices', indices, m, 'rows of shape')
    given = weights
    weights = check_weights(who, 'weights', weights)
    check_rank(who, 'weights', weights, (1, 2))
    if weights.shape == (1,):
        weights = weights.reshape(1, 1)
    elif weights.shape != indices.shape:
        raise ValueError(f'{who}: weights must have shape {indices.shape} (one weight per entry of indices) '
                         f'or be a scalar or shape (1,) (one homogeneous weight), got {weights.shape}.')
    weights, x = check_product_operand(who, weights, given, x, shape=(m, n), transpose=transpose, matrix=matrix,
                                       events=events)
    if validate and is_concrete(indices):
        validate_fcn_indices(who, indices, n)
    return weights, indices, x, (m, n)


def checked_call(op, weights, indices, x, *, shape, transpose, backend, validate):
    """Check an FCN product's operands for the declared operator ``op``, then bind it."""
    weights, x, unit = split_product(weights, x)
    weights, indices, x, shape = check_fcn_call(
        f'{op.name}()', weights, indices, x, shape=shape, transpose=transpose, matrix=op.matrix,
        events=op.events, validate=validate)
    return attach(op.bind(weights, indices, x, shape=shape, transpose=transpose, backend=backend), unit)
