"""Argument checks shared by the CSR operators (trace time, shapes and dtypes only)."""

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

__all__ = ['check_csr_call']


def check_csr_call(who, data, indices, indptr, x, *, shape, transpose, matrix, events):
    """Validate a CSR product's operands; returns ``(data, indices, indptr, x, shape)``.

    ``data`` becomes shape ``(1,)`` when given as a scalar; ``indptr`` takes
    the dtype of ``indices``; a float operand ``x`` is cast to ``data``'s dtype.
    """
    m, n = check_shape(who, shape)
    if not isinstance(transpose, bool):
        raise TypeError(f'{who}: transpose must be a bool, got {transpose!r}.')
    data = check_weights(who, 'data', data)
    check_rank(who, 'data', data, (1,))
    indices = check_index_array(who, 'indices', indices)
    indptr = check_index_array(who, 'indptr', indptr).astype(indices.dtype)
    check_length(who, 'indptr', indptr, m + 1, 'rows + 1')
    nnz = indices.shape[0]
    if data.shape[0] not in (1, nnz):
        raise ValueError(f'{who}: data must have length {nnz} (one weight per entry of indices) '
                         f'or 1 (one homogeneous weight), got {data.shape[0]}.')
    name = 'B' if matrix else ('spikes' if events else 'v')
    x = check_events(who, name, x) if events else check_float_operand(who, name, x, data.dtype)
    check_rank(who, name, x, (2,) if matrix else (1,))
    want, what = (m, 'rows of shape, as transpose=True') if transpose else (n, 'columns of shape')
    check_length(who, name, x, want, what)
    return data, indices, indptr, x, (m, n)
