"""``csr2csc_on_post``: on postsynaptic events, add the presynaptic trace to the stored weights of their columns."""

from __future__ import annotations

import numpy as np

from eventjax.kernels.common.checks import check_index_array, check_length, is_concrete
from eventjax.kernels.common.update import Update
from eventjax.kernels.plasticity.arguments import (
    check_bounds,
    check_csr_structure,
    check_positions_weight,
    check_shape,
    check_spikes,
    check_trace,
    longest_segment,
    repair_structure,
)

__all__ = ['csr2csc_on_post']


def csr2csc_on_post(weight, indices, indptr, weight_indices, pre_trace, post_spike, w_min=None, w_max=None, *,
                    shape, backend=None, validate=True, max_col_length=None):
    """Update CSR weights on postsynaptic events: ``W[i, j] += pre_trace[i]`` for every stored ``i`` of column ``j``.

    ``weight`` is in CSR order; ``indices``, ``indptr`` and
    ``weight_indices`` are its column view (:func:`eventjax.csr_column_view`,
    cached on :class:`eventjax.CSR`): the rows of each column in CSC order,
    the column pointers, and where each of those entries sits in ``weight``.
    Only the columns with an event are visited, so the cost is events x
    column length. Bounds, aliasing and derivatives as in :func:`csr_on_pre`.

    Args:
        weight: one float weight per stored entry, CSR order, length ``nnz``.
        indices: length ``nnz``, the row of each entry in column order.
        indptr: length ``n + 1``, where each column starts in ``indices``.
        weight_indices: length ``nnz``, the position in ``weight`` of each entry in column order.
        pre_trace: length ``m``, cast to the weights' dtype.
        post_spike: length ``n``; ``True`` or ``> 0`` is an event.
        w_min, w_max, shape, backend, validate: as in :func:`csr_on_pre`.
        max_col_length: the most entries a column holds (read from a concrete ``indptr``); a
            longer column is read in more passes (slower, never cut short).

    Returns:
        The updated ``weight``.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> w, idx, ptr = jnp.array([.5, .3, .8, .1]), jnp.array([1, 0, 1, 2]), jnp.array([0, 1, 4])
        >>> rows, cols_ptr, pos = ej.csr_column_view(idx, ptr, shape=(2, 3))
        >>> post = jnp.array([False, True, False])
        >>> ej.csr2csc_on_post(w, rows, cols_ptr, pos, jnp.array([.1, .2]), post, shape=(2, 3))
        Array([0.6, 0.3, 1. , 0.1], dtype=float32)
    """
    who = 'csr2csc_on_post()'
    m, n = check_shape(who, shape)
    max_col = longest_segment(who, indptr, max_col_length, 'max_col_length')
    indices, indptr = check_csr_structure(who, indices, indptr, n, m, validate, what=('columns', 'rows'),
                                          repair=False)
    weight_indices = check_index_array(who, 'weight_indices', weight_indices)
    check_length(who, 'weight_indices', weight_indices, indices.shape[0], 'one per entry of indices')
    weight = check_positions_weight(who, weight, indices.shape[0])
    if validate and is_concrete(weight_indices) and weight_indices.shape[0]:
        # In NumPy: under jit, jnp operations on a closed-over array would be traced and could not raise here.
        positions = np.asarray(weight_indices)
        bad = (positions < 0) | (positions >= weight.shape[0])
        if bool(bad.any()):
            k = int(bad.argmax())
            raise ValueError(f'{who}: weight_indices[{k}] = {int(positions[k])} is outside [0, '
                             f'{weight.shape[0]}) (the positions in weight); rebuild the column view with '
                             f'eventjax.csr_column_view.')
    pre_trace = check_trace(who, 'pre_trace', pre_trace, m, 'rows of shape', weight.dtype)
    post_spike = check_spikes(who, 'post_spike', post_spike, n, 'columns of shape')
    w_min, w_max = check_bounds(who, w_min, w_max)
    return _csr2csc_on_post.bind(weight, indices, indptr, weight_indices, pre_trace, post_spike, shape=(m, n),
                                 w_min=w_min, w_max=w_max, max_col=max_col, backend=backend)


_csr2csc_on_post = Update('csr2csc_on_post', __package__,
                          ('weight', 'indices', 'indptr', 'weight_indices', 'pre_trace', 'post_spike'),
                          trace='pre_trace', kernels=('numba', 'warp', 'pallas'), prepare=repair_structure)
