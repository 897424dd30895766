"""``binary_csrmm``: a CSR sparse matrix times a dense matrix of events."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.csr import reference
from eventjax.kernels.csr.arguments import checked_call, repair_structure

__all__ = ['binary_csrmm']


def binary_csrmm(data, indices, indptr, B, *, shape, transpose=False, backend=None, validate=True):
    """Multiply a CSR matrix ``A`` (``shape=(m, n)``) by a matrix of events.

    An entry of ``B`` is an event when it is ``True`` or ``> 0``; its value is
    otherwise ignored, so the product sums the weights of event entries. The
    derivative with respect to ``B`` is that of :func:`csrmm`.

    Events, dtypes and bad indices follow the contract in :doc:`/semantics`.

    Args:
        B: ``(n, k)`` events (``(m, k)`` when ``transpose``), bool or numeric.
        data, indices, indptr, shape, transpose, backend, validate: as in :func:`csrmv`.

    Returns:
        ``(m, k)`` (``(n, k)`` when ``transpose``): :func:`csrmm` of the event indicator.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> data, indices, indptr = jnp.array([1., 2.]), jnp.array([0, 1]), jnp.array([0, 1, 2])
        >>> ej.binary_csrmm(data, indices, indptr, jnp.array([[True, False], [True, True]]), shape=(2, 2))
        Array([[1., 0.],
               [2., 2.]], dtype=float32)
    """
    return checked_call(_binary_csrmm, data, indices, indptr, B,
                        shape=shape, transpose=transpose, backend=backend, validate=validate)


_binary_csrmm = Operator('binary_csrmm', __package__, ('data', 'indices', 'indptr', 'B'),
                         events=True, matrix=True, weight_cotangent=reference.entry_cotangent, float_op='csrmm',
                         kernels=('numba', 'warp', 'pallas', 'cpp', 'cuda'), prepare=repair_structure)
