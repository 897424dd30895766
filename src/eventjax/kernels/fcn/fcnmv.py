"""``fcnmv``: a fixed-connection-number (FCN) matrix times a dense float vector."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.common.keywords import operand
from eventjax.kernels.fcn import reference
from eventjax.kernels.fcn.arguments import checked_call

__all__ = ['fcnmv']


def fcnmv(weights, indices, v=None, *, shape, transpose=False, backend=None, validate=True, vector=None):
    """Multiply an FCN matrix ``A`` (``shape=(m, n)``, ``k`` connections per row) by a vector.

    Row ``i`` of ``A`` has weight ``weights[i, j]`` at column ``indices[i, j]``
    (duplicate columns add up).

    Events, dtypes and bad indices follow the contract in :doc:`/semantics`.

    Args:
        weights: ``(m, k)`` float weights, or one shared scalar (or shape ``(1,)``).
        indices: ``(m, k)`` column indices (int32/int64).
        v: length ``n`` (``m`` when ``transpose``); cast to the weights' dtype.
        shape: ``(m, n)``.
        transpose: compute ``v @ A`` instead of ``A @ v``.
        backend: per-call backend (``'jax'``, ``'numba'``, ``'warp'``), or None.
        validate: check concrete index structure by value (False skips it for
            trusted structure; bad entries are then dropped).
        vector: brainevent's name for ``v``; warns, and goes in 0.3.0.

    Returns:
        Length ``m`` (``n`` when ``transpose``), in the weights' dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> weights, indices = jnp.array([[1., 2.], [3., 4.]]), jnp.array([[0, 1], [1, 2]])
        >>> ej.fcnmv(weights, indices, jnp.array([1., 10., 100.]), shape=(2, 3))
        Array([ 21., 430.], dtype=float32)
    """
    v = operand('fcnmv', 'v', v, 'vector', vector)
    return checked_call(_fcnmv, weights, indices, v,
                        shape=shape, transpose=transpose, backend=backend, validate=validate)


_fcnmv = Operator('fcnmv', __package__, ('weights', 'indices', 'v'),
                  events=False, matrix=False, weight_cotangent=reference.entry_cotangent, mm_op='fcnmm',
                  kernels=('numba', 'warp', 'pallas', 'cpp', 'cuda'))
