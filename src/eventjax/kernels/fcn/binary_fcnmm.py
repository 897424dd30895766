"""``binary_fcnmm``: a fixed-connection-number (FCN) matrix times a dense matrix of events."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.common.keywords import operand
from eventjax.kernels.fcn import reference
from eventjax.kernels.fcn.arguments import checked_call

__all__ = ['binary_fcnmm']


def binary_fcnmm(weights, indices, B=None, *, shape, transpose=False, backend=None, validate=True,
                 matrix=None):
    """Multiply an FCN matrix ``A`` (``shape=(m, n)``) by a matrix of events.

    An entry of ``B`` is an event when it is ``True`` or ``> 0``; its value is
    otherwise ignored. The derivative with respect to ``B`` is that of
    :func:`fcnmm`.

    Events, dtypes and bad indices follow the contract in :doc:`/semantics`.

    Args:
        B: ``(n, c)`` events (``(m, c)`` when ``transpose``), bool or numeric.
        weights, indices, shape, transpose, backend, validate: as in :func:`fcnmv`.
        matrix: brainevent's name for ``B``; warns, and goes in 0.3.0.

    Returns:
        ``(m, c)`` (``(n, c)`` when ``transpose``): :func:`fcnmm` of the event indicator.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> indices = jnp.array([[0, 1], [1, 2]])
        >>> ej.binary_fcnmm(2.0, indices, jnp.array([[True, False], [True, True]]), shape=(2, 3), transpose=True)
        Array([[2., 0.],
               [4., 2.],
               [2., 2.]], dtype=float32)
    """
    B = operand('binary_fcnmm', 'B', B, 'matrix', matrix)
    return checked_call(_binary_fcnmm, weights, indices, B,
                        shape=shape, transpose=transpose, backend=backend, validate=validate)


_binary_fcnmm = Operator('binary_fcnmm', __package__, ('weights', 'indices', 'B'),
                         events=True, matrix=True, weight_cotangent=reference.entry_cotangent, float_op='fcnmm',
                         kernels=('numba', 'warp', 'pallas', 'cpp', 'cuda'))
