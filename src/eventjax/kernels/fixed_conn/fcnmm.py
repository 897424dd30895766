"""``fcnmm``: a fixed-connection-number (FCN) matrix times a dense float matrix."""

from __future__ import annotations

import jax

from eventjax.backends import XLACustomKernel
from eventjax.kernels.common import LinearOp, register_rules
from eventjax.kernels.common.registration import register_numba, register_warp
from eventjax.kernels.fixed_conn import reference
from eventjax.kernels.fixed_conn.arguments import check_fcn_call

__all__ = ['bind_fcnmm', 'fcnmm']


def fcnmm(weights, indices, B, *, shape, transpose=False, backend=None, validate=True):
    """Multiply an FCN matrix ``A`` (``shape=(m, n)``, ``k`` connections per row) by a dense matrix.

    Row ``i`` of ``A`` has weight ``weights[i, j]`` at column ``indices[i, j]``.

    Events, dtypes and bad indices follow the contract in :doc:`/semantics`.

    Args:
        weights: ``(m, k)`` float weights, or one shared scalar (or shape ``(1,)``).
        indices: ``(m, k)`` column indices (int32/int64).
        B: ``(n, c)`` matrix (``(m, c)`` when ``transpose``); cast to the weights' dtype.
        shape: ``(m, n)``.
        transpose: compute ``A.T @ B`` instead of ``A @ B``.
        backend: per-call backend (``'jax'``, ``'numba'``, ``'warp'``), or None.
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
    return bind_fcnmm(weights, indices, B, shape=shape, transpose=transpose, backend=backend)


def bind_fcnmm(weights, indices, B, *, shape, transpose, backend=None):
    """Bind the primitive on checked operands (what rules call)."""
    out = jax.ShapeDtypeStruct((shape[1] if transpose else shape[0], B.shape[1]), weights.dtype)
    return _fcnmm_p(weights, indices, B, outs=(out,), backend=backend, shape=shape, transpose=transpose)[0]


def _numba_kernel(*, shape, transpose, outs):
    from eventjax.kernels.fixed_conn import numba_impl
    return numba_impl.fcnmm_kernel(transpose=transpose)


def _warp_kernel(dtypes, *, shape, transpose, outs):
    from eventjax.kernels.fixed_conn import warp_impl
    return warp_impl.fcnmm_kernel(dtypes, shape=shape, transpose=transpose, outs=outs)


_fcnmm_p = XLACustomKernel('fcnmm')
_fcnmm_p.def_jax_kernel(reference.fcnmm_kernel)
register_numba(_fcnmm_p, _numba_kernel)
register_warp(_fcnmm_p, _warp_kernel)
register_rules(_fcnmm_p, LinearOp(
    operands=('weights', 'indices', 'B'), events=False, call=bind_fcnmm, float_call=bind_fcnmm,
    weight_cotangent=reference.entry_cotangent, mm_call=bind_fcnmm, is_mm=True))
