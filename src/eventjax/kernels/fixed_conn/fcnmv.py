"""``fcnmv``: a fixed-connection-number (FCN) matrix times a dense float vector."""

from __future__ import annotations

import jax

from eventjax.backends import XLACustomKernel
from eventjax.kernels.common import LinearOp, register_rules
from eventjax.kernels.common.registration import register_numba, register_warp
from eventjax.kernels.fixed_conn import reference
from eventjax.kernels.fixed_conn.arguments import check_fcn_call
from eventjax.kernels.fixed_conn.fcnmm import bind_fcnmm

__all__ = ['bind_fcnmv', 'fcnmv']


def fcnmv(weights, indices, v, *, shape, transpose=False, backend=None, validate=True):
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

    Returns:
        Length ``m`` (``n`` when ``transpose``), in the weights' dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> weights, indices = jnp.array([[1., 2.], [3., 4.]]), jnp.array([[0, 1], [1, 2]])
        >>> ej.fcnmv(weights, indices, jnp.array([1., 10., 100.]), shape=(2, 3))
        Array([ 21., 430.], dtype=float32)
    """
    weights, indices, v, shape = check_fcn_call(
        'fcnmv()', weights, indices, v, shape=shape, transpose=transpose, matrix=False, events=False, validate=validate)
    return bind_fcnmv(weights, indices, v, shape=shape, transpose=transpose, backend=backend)


def bind_fcnmv(weights, indices, v, *, shape, transpose, backend=None):
    """Bind the primitive on checked operands (what rules call)."""
    out = jax.ShapeDtypeStruct((shape[1] if transpose else shape[0],), weights.dtype)
    return _fcnmv_p(weights, indices, v, outs=(out,), backend=backend, shape=shape, transpose=transpose)[0]


def _numba_kernel(*, shape, transpose, outs):
    from eventjax.kernels.fixed_conn import numba_impl
    return numba_impl.fcnmv_kernel(transpose=transpose)


def _warp_kernel(dtypes, *, shape, transpose, outs):
    from eventjax.kernels.fixed_conn import warp_impl
    return warp_impl.fcnmv_kernel(dtypes, shape=shape, transpose=transpose, outs=outs)


_fcnmv_p = XLACustomKernel('fcnmv')
_fcnmv_p.def_jax_kernel(reference.fcnmv_kernel)
register_numba(_fcnmv_p, _numba_kernel)
register_warp(_fcnmv_p, _warp_kernel)
register_rules(_fcnmv_p, LinearOp(
    operands=('weights', 'indices', 'v'), events=False, call=bind_fcnmv, float_call=bind_fcnmv,
    weight_cotangent=reference.entry_cotangent, mm_call=bind_fcnmm, is_mm=False))
