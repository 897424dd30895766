"""``fcnmm``: a fixed-connection-number (FCN) matrix times a dense float matrix."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.fixed_conn import reference
from eventjax.kernels.fixed_conn.arguments import check_fcn_call

__all__ = ['bind_fcnmm', 'fcnmm']


def fcnmm(weights, indices, B, *, shape, transpose=False, backend=None):
    """Multiply an FCN matrix ``A`` (``shape=(m, n)``, ``k`` connections per row) by a dense matrix.

    Row ``i`` of ``A`` has weight ``weights[i, j]`` at column ``indices[i, j]``.

    Args:
        weights: ``(m, k)`` float weights, or one shared scalar (or shape ``(1,)``).
        indices: ``(m, k)`` column indices (int32/int64).
        B: ``(n, c)`` matrix (``(m, c)`` when ``transpose``); cast to the weights' dtype.
        shape: ``(m, n)``.
        transpose: compute ``A.T @ B`` instead of ``A @ B``.
        backend: per-call backend (``'jax'``, ``'numba'``, ``'warp'``), or None.

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
        'fcnmm()', weights, indices, B, shape=shape, transpose=transpose, matrix=True, events=False)
    return bind_fcnmm(weights, indices, B, shape=shape, transpose=transpose, backend=backend)


_fcnmm = Operator(
    'fcnmm', __package__, operands=('weights', 'indices', 'B'), events=False, matrix=True,
    reference=reference.fcnmm_kernel, weight_cotangent=reference.entry_cotangent,
    float_op='fcnmm', mm_op='fcnmm')
bind_fcnmm = _fcnmm.bind
