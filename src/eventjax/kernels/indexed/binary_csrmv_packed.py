"""``binary_csrmv_packed``: a CSR product that reads bit-packed events directly.

Its primitive (shared with :func:`~eventjax.binary_fcnmv_packed`) is
declared in :mod:`.packed_product`.
"""

from __future__ import annotations

from eventjax.kernels.common.units import weights_carry_the_unit
from eventjax.kernels.indexed.arguments import check_structure
from eventjax.kernels.indexed.binary_fcnmv_packed import binary_fcnmv_packed
from eventjax.kernels.indexed.packed_product import check_transpose, check_words, packed_product

# binary_fcnmv_packed stays importable from here, where it used to live.
__all__ = ['binary_csrmv_packed', 'binary_fcnmv_packed']


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
        >>> data, indices, indptr = jnp.array([1., 2., 3., 4.]), jnp.array([0, 2, 1, 2]), jnp.array([0, 2, 4])
        >>> words = ej.bitpack(jnp.array([True, True]))
        >>> ej.binary_csrmv_packed(data, indices, indptr, words, shape=(2, 3), transpose=True)
        Array([1., 3., 6.], dtype=float32)
    """
    who = 'binary_csrmv_packed()'
    check_transpose(who, transpose)
    data, indices, indptr, (m, n) = check_structure(who, data, indices, indptr, shape=shape, validate=validate)
    words = check_words(who, words, m if transpose else n)
    return packed_product(data, indices, indptr, words, (m, n, 0), transpose=transpose, backend=backend)
