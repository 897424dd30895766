"""Argument checks shared by the FCN operators (trace time, shapes and dtypes only)."""

from __future__ import annotations

from eventjax.kernels.common import (
    check_events,
    check_float_operand,
    check_index_array,
    check_length,
    check_rank,
    check_shape,
    check_weights,
)

__all__ = ['check_fcn_call']


def check_fcn_call(who, weights, indices, x, *, shape, transpose, matrix, events):
    """Validate an FCN product's operands; returns ``(weights, indices, x, shape)``.

    ``indices`` is ``(m, k)``: row ``i`` connects to columns ``indices[i]``.
    ``weights`` comes back as ``(m, k)``, or as ``(1, 1)`` when homogeneous
    (given as a scalar or shape ``(1,)``), so every kernel sees rank 2; a float
    operand ``x`` is cast to the weights' dtype.
    """
    m, n = check_shape(who, shape)
    if not isinstance(transpose, bool):
        raise TypeError(f'{who}: transpose must be a bool, got {transpose!r}.')
    indices = check_index_array(who, 'indices', indices, rank=2)
    check_length(who, 'indices', indices, m, 'rows of shape')
    weights = check_weights(who, 'weights', weights)
    check_rank(who, 'weights', weights, (1, 2))
    if weights.shape == (1,):
        weights = weights.reshape(1, 1)
    elif weights.shape != indices.shape:
        raise ValueError(f'{who}: weights must have shape {indices.shape} (one weight per entry of indices) '
                         f'or be a scalar or shape (1,) (one homogeneous weight), got {weights.shape}.')
    name = 'B' if matrix else ('spikes' if events else 'v')
    x = check_events(who, name, x) if events else check_float_operand(who, name, x, weights.dtype)
    check_rank(who, name, x, (2,) if matrix else (1,))
    want, what = (m, 'rows of shape, as transpose=True') if transpose else (n, 'columns of shape')
    check_length(who, name, x, want, what)
    return weights, indices, x, (m, n)
