"""``csrmm``: a CSR sparse matrix times a dense float matrix."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.csr import reference
from eventjax.kernels.csr.arguments import checked_call, repair_structure

__all__ = ['csrmm']


def csrmm(data, indices, indptr, B, *, shape, transpose=False, backend=None, validate=True):
    """Multiply a CSR matrix ``A`` (``shape=(m, n)``) by a dense matrix.

    Events, dtypes and bad indices follow the contract in :doc:`/semantics`.

    Args:
        B: ``(n, k)`` matrix (``(m, k)`` when ``transpose``); cast to ``data``'s dtype.
        data, indices, indptr, shape, transpose, backend, validate: as in :func:`csrmv`.

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
    return checked_call(_csrmm, data, indices, indptr, B,
                        shape=shape, transpose=transpose, backend=backend, validate=validate)


_csrmm = Operator('csrmm', __package__, ('data', 'indices', 'indptr', 'B'),
                  events=False, matrix=True, weight_cotangent=reference.entry_cotangent,
                  kernels=('numba', 'warp', 'pallas', 'cpp', 'cuda'),
                  prepare=repair_structure)
