"""``binary_fcnmv_packed``: a FCN product that reads bit-packed events directly.

A FCN matrix is a CSR matrix whose rows all hold ``k`` entries, so it runs
on the ``binary_csrmv_packed`` primitive (:mod:`.packed_product`) with ``sizes = [m, n, k]`` in place
of a row-pointer array.
"""

from __future__ import annotations

import jax.numpy as jnp

from eventjax.kernels.common.checks import (
    check_index_array,
    check_shape,
    check_weights,
    is_concrete,
    validate_fcn_indices,
)
from eventjax.kernels.common.units import weights_carry_the_unit
from eventjax.kernels.indexed.packed_product import check_transpose, check_words, packed_product

__all__ = ['binary_fcnmv_packed']


@weights_carry_the_unit
def binary_fcnmv_packed(weights, indices, words, *, shape, transpose=False, backend=None, validate=True):
    """Multiply a FCN matrix (``shape=(m, n)``, ``indices`` ``(m, k)``) by bit-packed events.

    As :func:`binary_csrmv_packed` for :func:`binary_fcnmv`'s matrix:
    ``weights`` is ``(m, k)`` or one shared scalar.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> weights, indices = jnp.array([[1., 2.], [3., 4.]]), jnp.array([[0, 1], [1, 2]])
        >>> words = ej.bitpack(jnp.array([True, False]))
        >>> ej.binary_fcnmv_packed(weights, indices, words, shape=(2, 3), transpose=True)
        Array([1., 2., 0.], dtype=float32)
    """
    who = 'binary_fcnmv_packed()'
    check_transpose(who, transpose)
    m, n = check_shape(who, shape)
    weights = check_weights(who, 'weights', weights)
    indices = check_index_array(who, 'indices', indices, rank=2)
    if indices.shape[0] != m:
        raise ValueError(f'{who}: indices must have {m} rows (shape[0]), got shape {indices.shape}.')
    k = indices.shape[1]
    if weights.size != 1 and weights.shape != indices.shape:
        raise ValueError(f'{who}: weights must have the shape of indices {indices.shape} or be one scalar, '
                         f'got {weights.shape}.')
    if validate and is_concrete(indices):
        validate_fcn_indices(who, indices, n)
    words = check_words(who, words, m if transpose else n)
    data = weights.reshape(-1)
    flat = indices.reshape(-1)
    return packed_product(data, flat, jnp.zeros((1,), flat.dtype), words, (m, n, k), transpose=transpose,
                          backend=backend)
