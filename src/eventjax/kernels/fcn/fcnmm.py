"""``fcnmm``: a fixed-connection-number (FCN) matrix times a dense float matrix."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.common.keywords import operand
from eventjax.kernels.fcn import reference
from eventjax.kernels.fcn.arguments import checked_call

__all__ = ['fcnmm']


def fcnmm(weights, indices, B=None, *, shape, transpose=False, backend=None, validate=True, matrix=None):
    """Multiply an FCN matrix ``A`` (``shape=(m, n)``, ``k`` connections per row) by a dense matrix.

    Row ``i`` of ``A`` has weight ``weights[i, j]`` at column ``indices[i, j]``.

    Events, dtypes and bad indices follow the contract in :doc:`/semantics`.

    Args:
        B: ``(n, c)`` matrix (``(m, c)`` when ``transpose``); cast to the weights' dtype.
        weights, indices, shape, transpose, backend, validate: as in :func:`fcnmv`.
        matrix: brainevent's name for ``B``; warns, and goes in 0.3.0.

    Returns:
        ``(m, c)`` (``(n, c)`` when ``transpose``) in the weights' dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> indices = jnp.array([[0, 1], [1, 2]])
        >>> ej.fcnmm(1.0, indices, jnp.ones((3, 2)), shape=(2, 3))
        Array([[2., 2.],
               [2., 2.]], dtype=float32)
    """
    B = operand('fcnmm', 'B', B, 'matrix', matrix)
    return checked_call(_fcnmm, weights, indices, B,
                        shape=shape, transpose=transpose, backend=backend, validate=validate)


_fcnmm = Operator('fcnmm', __package__, ('weights', 'indices', 'B'),
                  events=False, matrix=True, weight_cotangent=reference.entry_cotangent,
                  kernels=('numba', 'warp', 'pallas', 'cpp', 'cuda'))
