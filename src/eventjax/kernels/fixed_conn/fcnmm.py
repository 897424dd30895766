"""``fcnmm``: a fixed-connection-number (FCN) matrix times a dense float matrix."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.fixed_conn import reference
from eventjax.kernels.fixed_conn.arguments import check_fcn_call

__all__ = ['fcnmm']


def fcnmm(weights, indices, B, *, shape, transpose=False, backend=None, validate=True):
    """Multiply an FCN matrix ``A`` (``shape=(m, n)``, ``k`` connections per row) by a dense matrix.

    Row ``i`` of ``A`` has weight ``weights[i, j]`` at column ``indices[i, j]``.

    Events, dtypes and bad indices follow the contract in :doc:`/semantics`.

    Args:
        B: ``(n, c)`` matrix (``(m, c)`` when ``transpose``); cast to the weights' dtype.
        weights, indices, shape, transpose, backend: as in :func:`fcnmv`.
        validate: check concrete index structure by value (False skips it for
            trusted structure; bad entries are then dropped).

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
    weights, indices, B, shape = check_fcn_call(
        'fcnmm()', weights, indices, B, shape=shape, transpose=transpose, matrix=True, events=False, validate=validate)
    return _fcnmm.bind(weights, indices, B, shape=shape, transpose=transpose, backend=backend)


_fcnmm = Operator('fcnmm', __package__, ('weights', 'indices', 'B'),
                  events=False, matrix=True, weight_cotangent=reference.entry_cotangent)
