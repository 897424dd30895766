"""The ``binary_csrmv_packed`` primitive and the checks of the products that read bit-packed events.

:func:`~eventjax.binary_csrmv_packed` and :func:`~eventjax.binary_fcnmv_packed` both end here:
a FCN matrix is a CSR matrix whose rows all hold ``k`` entries, so its
kernels read ``sizes = [m, n, k]`` (``k = 0``: rows from ``indptr``)
instead of a row-pointer array. The sizes travel as a
constant operand, so one compiled kernel serves every shape.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.kernels.common.checks import check_rank, check_transpose
from eventjax.kernels.common.operator import Declaration
from eventjax.kernels.indexed import packed_reference
from eventjax.kernels.indexed.rules import linear_in_data

__all__ = ['check_transpose', 'check_words', 'packed_product']

OPERANDS = ('data', 'indices', 'indptr', 'words', 'sizes')


def check_words(who, words, size):
    """``words`` as a uint32 array of ``ceil(size / 32)`` words, or a clear error."""
    words = jnp.asarray(words)
    if words.dtype != jnp.uint32:
        raise TypeError(f'{who}: words must be uint32 (from bitpack), got {words.dtype.name}.')
    check_rank(who, 'words', words, (1,))
    if words.shape[0] != -(-size // 32):
        raise ValueError(f'{who}: words must have length ceil({size} / 32) = {-(-size // 32)} (32 events per '
                         f'word on the event side), got {words.shape[0]}; pack with bitpack().')
    return words


def packed_product(data, indices, indptr, words, sizes, *, transpose, backend):
    """The product on checked operands; ``sizes = (m, n, k)`` with ``k = 0`` for CSR rows from ``indptr``."""
    m, n, k = sizes
    if min(m, n, indices.shape[0]) == 0:
        return jnp.zeros((n if transpose else m,), data.dtype)
    wide = data.astype(jnp.float32) if data.dtype == jnp.float16 else data
    size_arr = jnp.asarray(np.array([m, n, k], np.int64 if indices.dtype == jnp.int64 else np.int32))
    # The kernels of numba and warp read the sizes operand (one compiled kernel for every shape);
    # the jax kernel reads the statics.
    return _binary_csrmv_packed.bind(wide, indices, indptr, words, size_arr, backend=backend, shape=(m, n), fixed=k,
                                     transpose=transpose).astype(data.dtype)


def _out(data, *rest, shape, fixed, transpose):
    return jax.ShapeDtypeStruct((shape[1] if transpose else shape[0],), data.dtype)


def _cotangent(ct, n_weights, indices, indptr, words, sizes, *, shape, fixed, transpose):
    return packed_reference.weight_cotangent(ct, n_weights, indices, indptr, words, shape=shape, fixed=fixed,
                                             transpose=transpose)


_binary_csrmv_packed = Declaration('binary_csrmv_packed', __package__, OPERANDS, out=_out,
                                   rules=linear_in_data(_cotangent), kernels=('numba', 'warp', 'pallas'))
