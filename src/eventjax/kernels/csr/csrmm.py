"""``csrmm``: a CSR sparse matrix times a dense float matrix."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.csr import reference
from eventjax.kernels.csr.arguments import check_csr_call

__all__ = ['csrmm']


def csrmm(data, indices, indptr, B, *, shape, transpose=False, backend=None, validate=True):
    """Multiply a CSR matrix ``A`` (``shape=(m, n)``) by a dense matrix.

    Events, dtypes and bad indices follow the contract in :doc:`/semantics`.

    Args:
        B: ``(n, k)`` matrix (``(m, k)`` when ``transpose``); cast to ``data``'s dtype.
        data, indices, indptr, shape, transpose, backend: as in :func:`csrmv`.
        validate: check concrete index structure by value (False skips it for
            trusted structure; bad entries are then dropped).

    Returns:
        ``(m, k)`` (``(n, k)`` when ``transpose``) in ``data``'s dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> data, indices, indptr = jnp.array([1., 2.]), jnp.array([0, 1]), jnp.array([0, 1, 2])
        >>> ej.csrmm(data, indices, indptr, jnp.ones((2, 3)), shape=(2, 2))
        Array([[1., 1., 1.],
               [2., 2., 2.]], dtype=float32)
    """
    data, indices, indptr, B, shape = check_csr_call(
        'csrmm()', data, indices, indptr, B, shape=shape, transpose=transpose, matrix=True, events=False,
        validate=validate)
    return _csrmm.bind(data, indices, indptr, B, shape=shape, transpose=transpose, backend=backend)


_csrmm = Operator('csrmm', __package__, ('data', 'indices', 'indptr', 'B'),
                  events=False, matrix=True, weight_cotangent=reference.entry_cotangent)
