"""``binary_fcnmm``: a fixed-connection-number (FCN) matrix times a dense matrix of events."""

from __future__ import annotations

import jax

from eventjax.backends import XLACustomKernel
from eventjax.kernels.common import LinearOp, register_rules
from eventjax.kernels.common.registration import register_numba, register_warp
from eventjax.kernels.fixed_conn import reference
from eventjax.kernels.fixed_conn.arguments import check_fcn_call
from eventjax.kernels.fixed_conn.fcnmm import bind_fcnmm

__all__ = ['binary_fcnmm', 'bind_binary_fcnmm']


def binary_fcnmm(weights, indices, B, *, shape, transpose=False, backend=None, validate=True):
    """Multiply an FCN matrix ``A`` (``shape=(m, n)``) by a matrix of events.

    An entry of ``B`` is an event when it is ``True`` or ``> 0``; its value is
    otherwise ignored. The derivative with respect to ``B`` is that of
    :func:`fcnmm`.

    Events, dtypes and bad indices follow the contract in :doc:`/semantics`.

    Args:
        weights: ``(m, k)`` float weights, or one shared scalar (or shape ``(1,)``).
        indices: ``(m, k)`` column indices (int32/int64).
        B: ``(n, c)`` events (``(m, c)`` when ``transpose``), bool or numeric.
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
        >>> ej.binary_fcnmm(2.0, indices, jnp.array([[True, False], [True, True]]), shape=(2, 3), transpose=True)
        Array([[2., 0.],
               [4., 2.],
               [2., 2.]], dtype=float32)
    """
    weights, indices, B, shape = check_fcn_call(
        'binary_fcnmm()', weights, indices, B, shape=shape, transpose=transpose, matrix=True, events=True,
        validate=validate)
    return bind_binary_fcnmm(weights, indices, B, shape=shape, transpose=transpose, backend=backend)


def bind_binary_fcnmm(weights, indices, B, *, shape, transpose, backend=None):
    """Bind the primitive on checked operands (what rules call)."""
    out = jax.ShapeDtypeStruct((shape[1] if transpose else shape[0], B.shape[1]), weights.dtype)
    return _binary_fcnmm_p(weights, indices, B, outs=(out,), backend=backend, shape=shape, transpose=transpose)[0]


def _numba_kernel(*, shape, transpose, outs):
    from eventjax.kernels.fixed_conn import numba_impl
    return numba_impl.binary_fcnmm_kernel(transpose=transpose)


def _warp_kernel(dtypes, *, shape, transpose, outs):
    from eventjax.kernels.fixed_conn import warp_impl
    return warp_impl.binary_fcnmm_kernel(dtypes, shape=shape, transpose=transpose, outs=outs)


_binary_fcnmm_p = XLACustomKernel('binary_fcnmm')
_binary_fcnmm_p.def_jax_kernel(reference.binary_fcnmm_kernel)
register_numba(_binary_fcnmm_p, _numba_kernel)
register_warp(_binary_fcnmm_p, _warp_kernel)
register_rules(_binary_fcnmm_p, LinearOp(
    operands=('weights', 'indices', 'B'), events=True, call=bind_binary_fcnmm, float_call=bind_fcnmm,
    weight_cotangent=reference.entry_cotangent, mm_call=bind_binary_fcnmm, is_mm=True))
