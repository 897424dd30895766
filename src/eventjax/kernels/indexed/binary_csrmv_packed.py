"""``binary_csrmv_packed`` / ``binary_fcnmv_packed``: sparse products that read bit-packed events directly.

Both run one primitive: a FCN matrix is a CSR matrix whose rows all hold
``k`` entries, so its kernels read ``sizes = [m, n, k]`` (``k = 0``: rows
from ``indptr``) instead of a row-pointer array. The sizes travel as a
constant operand, so one compiled kernel serves every shape.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.backends import XLACustomKernel
from eventjax.kernels.common.checks import (
    check_index_array,
    check_rank,
    check_shape,
    check_weights,
    is_concrete,
    validate_fcn_indices,
)
from eventjax.kernels.common.operator import register_kernels
from eventjax.kernels.common.units import weights_carry_the_unit
from eventjax.kernels.indexed import packed_reference
from eventjax.kernels.indexed.arguments import check_structure
from eventjax.kernels.indexed.rules import register_linear_in_data

__all__ = ['binary_csrmv_packed', 'binary_fcnmv_packed']

OPERANDS = ('data', 'indices', 'indptr', 'words', 'sizes')


@weights_carry_the_unit
def binary_csrmv_packed(data, indices, indptr, words, *, shape, transpose=False, backend=None, validate=True):
    """Multiply a CSR matrix ``A`` (``shape=(m, n)``) by events packed 32 per uint32 word (:func:`bitpack`).

    The result is :func:`binary_csrmv` of ``bitunpack(words, size)``
    (``size = m`` with ``transpose``, else ``n``; bits past ``size`` are
    ignored), but the kernels read the ``ceil(size / 32)`` words, never a
    vector of length ``size``: with ``transpose=True`` the numba and warp
    kernels skip a word without events in one test and visit the rows of
    the set bits; with ``transpose=False`` each stored entry tests one bit.
    The ``jax`` backend unpacks first. The derivative with respect to
    ``data`` is exact; the events have none.

    Args:
        data, indices, indptr, shape, transpose, backend, validate: as in :func:`binary_csrmv`.
        words: uint32 of length ``ceil(size / 32)``: bit ``b`` of word ``w`` is neuron ``32 w + b``.

    Returns:
        Length ``n`` (``m`` without ``transpose``) in ``data``'s dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> data, indices, indptr = jnp.array([1., 2., 3.]), jnp.array([0, 1, 1]), jnp.array([0, 2, 3])
        >>> words = ej.bitpack(jnp.array([False, True]))
        >>> ej.binary_csrmv_packed(data, indices, indptr, words, shape=(2, 2), transpose=True)
        Array([0., 3.], dtype=float32)
    """
    who = 'binary_csrmv_packed()'
    _check_transpose(who, transpose)
    data, indices, indptr, (m, n) = check_structure(who, data, indices, indptr, shape=shape, validate=validate)
    words = _check_words(who, words, m if transpose else n)
    return _call(data, indices, indptr, words, (m, n, 0), transpose=transpose, backend=backend)


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
    _check_transpose(who, transpose)
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
    words = _check_words(who, words, m if transpose else n)
    data = weights.reshape(-1)
    flat = indices.reshape(-1)
    return _call(data, flat, jnp.zeros((1,), flat.dtype), words, (m, n, k), transpose=transpose, backend=backend)


def _check_transpose(who, transpose):
    if not isinstance(transpose, bool):
        raise TypeError(f'{who}: transpose must be a bool, got {transpose!r}.')


def _check_words(who, words, size):
    words = jnp.asarray(words)
    if words.dtype != jnp.uint32:
        raise TypeError(f'{who}: words must be uint32 (from bitpack), got {words.dtype.name}.')
    check_rank(who, 'words', words, (1,))
    if words.shape[0] != -(-size // 32):
        raise ValueError(f'{who}: words must have length ceil({size} / 32) = {-(-size // 32)} (32 events per '
                         f'word on the event side), got {words.shape[0]}; pack with bitpack().')
    return words


def _call(data, indices, indptr, words, sizes, *, transpose, backend):
    m, n, k = sizes
    if min(m, n, indices.shape[0]) == 0:
        return jnp.zeros((n if transpose else m,), data.dtype)
    wide = data.astype(jnp.float32) if data.dtype == jnp.float16 else data
    size_arr = jnp.asarray(np.array([m, n, k], np.int64 if indices.dtype == jnp.int64 else np.int32))
    return _bind(wide, indices, indptr, words, size_arr, backend=backend, shape=(m, n), fixed=k,
                 transpose=transpose).astype(data.dtype)


def _bind(data, indices, indptr, words, sizes, *, backend=None, shape, fixed, transpose):
    # The kernels of numba and warp read the sizes operand (one compiled kernel for every shape);
    # the jax kernel reads the statics.
    out = jax.ShapeDtypeStruct((shape[1] if transpose else shape[0],), data.dtype)
    return _prim(data, indices, indptr, words, sizes, outs=(out,), backend=backend, shape=shape, fixed=fixed,
                 transpose=transpose)[0]


def _cotangent(ct, n_weights, indices, indptr, words, sizes, *, shape, fixed, transpose):
    return packed_reference.weight_cotangent(ct, n_weights, indices, indptr, words, shape=shape, fixed=fixed,
                                             transpose=transpose)


_prim = XLACustomKernel('binary_csrmv_packed')
register_kernels(_prim, __package__, 'binary_csrmv_packed', ('numba', 'warp', 'pallas'))
register_linear_in_data(_prim, OPERANDS, _bind, _cotangent)
