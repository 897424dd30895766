"""``binary_fcnmv``: a fixed-connection-number (FCN) matrix times a vector of events."""

from __future__ import annotations

import jax

from eventjax.backends import XLACustomKernel
from eventjax.kernels.common import LinearOp, register_rules
from eventjax.kernels.common.registration import register_numba, register_warp
from eventjax.kernels.fixed_conn import reference
from eventjax.kernels.fixed_conn.arguments import check_fcn_call
from eventjax.kernels.fixed_conn.binary_fcnmm import bind_binary_fcnmm
from eventjax.kernels.fixed_conn.fcnmv import bind_fcnmv

__all__ = ['binary_fcnmv', 'bind_binary_fcnmv']


def binary_fcnmv(weights, indices, spikes, *, shape, transpose=False, backend=None, validate=True):
    """Multiply an FCN matrix ``A`` (``shape=(m, n)``, ``k`` connections per row) by a vector of events.

    An entry of ``spikes`` is an event when it is ``True`` or ``> 0``; its
    value is otherwise ignored. With ``transpose=True`` (presynaptic events
    into postsynaptic currents) the ``numba`` kernel visits only the rows of
    the events, so its cost grows with events x ``k``. The derivative with
    respect to ``spikes`` is that of :func:`fcnmv`.

    Events, dtypes and bad indices follow the contract in :doc:`/semantics`.

    Args:
        weights: ``(m, k)`` float weights, or one shared scalar (or shape ``(1,)``).
        indices: ``(m, k)`` column indices (int32/int64).
        spikes: length ``n`` (``m`` when ``transpose``), bool or numeric.
        shape: ``(m, n)``.
        transpose: compute ``spikes @ A`` instead of ``A @ spikes``.
        backend: per-call backend (``'jax'``, ``'numba'``, ``'warp'``), or None.
        validate: check concrete index structure by value (False skips it for
            trusted structure; bad entries are then dropped).

    Returns:
        Length ``m`` (``n`` when ``transpose``), in the weights' dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> weights, indices = jnp.array([[1., 2.], [3., 4.]]), jnp.array([[0, 1], [1, 2]])
        >>> ej.binary_fcnmv(weights, indices, jnp.array([True, False]), shape=(2, 3), transpose=True)
        Array([1., 2., 0.], dtype=float32)
    """
    weights, indices, spikes, shape = check_fcn_call(
        'binary_fcnmv()', weights, indices, spikes, shape=shape, transpose=transpose, matrix=False, events=True,
        validate=validate)
    return bind_binary_fcnmv(weights, indices, spikes, shape=shape, transpose=transpose, backend=backend)


def bind_binary_fcnmv(weights, indices, spikes, *, shape, transpose, backend=None):
    """Bind the primitive on checked operands (what rules call)."""
    out = jax.ShapeDtypeStruct((shape[1] if transpose else shape[0],), weights.dtype)
    return _binary_fcnmv_p(weights, indices, spikes, outs=(out,), backend=backend,
                           shape=shape, transpose=transpose)[0]


def _numba_kernel(*, shape, transpose, outs):
    from eventjax.kernels.fixed_conn import numba_impl
    return numba_impl.binary_fcnmv_kernel(transpose=transpose)


def _warp_kernel(dtypes, *, shape, transpose, outs):
    from eventjax.kernels.fixed_conn import warp_impl
    return warp_impl.binary_fcnmv_kernel(dtypes, shape=shape, transpose=transpose, outs=outs)


_binary_fcnmv_p = XLACustomKernel('binary_fcnmv')
_binary_fcnmv_p.def_jax_kernel(reference.binary_fcnmv_kernel)
register_numba(_binary_fcnmv_p, _numba_kernel)
register_warp(_binary_fcnmv_p, _warp_kernel)
register_rules(_binary_fcnmv_p, LinearOp(
    operands=('weights', 'indices', 'spikes'), events=True, call=bind_binary_fcnmv, float_call=bind_fcnmv,
    weight_cotangent=reference.entry_cotangent, mm_call=bind_binary_fcnmm, is_mm=False))
