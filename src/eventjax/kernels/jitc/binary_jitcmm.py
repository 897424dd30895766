"""``binary_jitcmm``: a just-in-time connectivity (JITC) matrix times a dense matrix of events."""

from __future__ import annotations

import jax

from eventjax.backends import XLACustomKernel
from eventjax.kernels.common import LinearOp, register_rules
from eventjax.kernels.common.registration import register_numba, register_warp
from eventjax.kernels.jitc import reference
from eventjax.kernels.jitc.arguments import check_jitc_call
from eventjax.kernels.jitc.jitcmm import bind_jitcmm

__all__ = ['binary_jitcmm', 'bind_binary_jitcmm']


def binary_jitcmm(weights, B, *, seed, prob, shape, law='homo', transpose=False, backend=None):
    """Multiply a JITC matrix ``A`` (``shape=(m, n)``) by a matrix of events.

    An entry of ``B`` is an event when it is ``True`` or ``> 0``. With
    ``transpose=True`` the numba kernel generates a row of ``A`` only when
    that row of ``B`` holds an event. The derivative with respect to ``B`` is
    that of :func:`jitcmm`.

    Args:
        weights: one weight (``law='homo'``), ``(low, high)`` (``'uniform'``)
            or ``(loc, scale)`` (``'normal'``).
        B: ``(n, c)`` events (``(m, c)`` when ``transpose``), bool or numeric.
        seed: integer scalar (may be traced).
        prob: connection probability in ``[0, 1]`` (a Python float).
        shape: ``(m, n)``.
        law: ``'homo'``, ``'uniform'`` or ``'normal'``.
        transpose: compute ``A.T @ B`` instead of ``A @ B``.
        backend: per-call backend (``'jax'``, ``'numba'``, ``'warp'``), or None.

    Returns:
        ``(m, c)`` (``(n, c)`` when ``transpose``) in the weights' dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.binary_jitcmm(2.0, jnp.array([[True], [False], [True]]), seed=1, prob=1.0, shape=(2, 3))
        Array([[4.],
               [4.]], dtype=float32)
    """
    weights, stream, B, shape = check_jitc_call(
        'binary_jitcmm()', weights, B, seed=seed, prob=prob, shape=shape, law=law, transpose=transpose,
        matrix=True, events=True)
    return bind_binary_jitcmm(weights, stream, B, shape=shape, transpose=transpose, law=law, backend=backend)


def bind_binary_jitcmm(weights, stream, B, *, shape, transpose, law, backend=None):
    """Bind the primitive on checked operands (what rules call)."""
    out = jax.ShapeDtypeStruct((shape[1] if transpose else shape[0], B.shape[1]), weights.dtype)
    return _binary_jitcmm_p(weights, stream, B, outs=(out,), backend=backend, shape=shape,
                            transpose=transpose, law=law)[0]


def _numba_kernel(*, shape, transpose, law, outs):
    from eventjax.kernels.jitc import numba_impl
    return numba_impl.jitc_kernel(law=law, transpose=transpose, binary=True, matrix=True)


def _warp_kernel(dtypes, *, shape, transpose, law, outs):
    from eventjax.kernels.jitc import warp_impl
    return warp_impl.jitc_kernel(dtypes, law=law, transpose=transpose, binary=True, matrix=True, outs=outs)


_binary_jitcmm_p = XLACustomKernel('binary_jitcmm')
_binary_jitcmm_p.def_jax_kernel(reference.binary_jitcmm_kernel)
register_numba(_binary_jitcmm_p, _numba_kernel)
register_warp(_binary_jitcmm_p, _warp_kernel)
register_rules(_binary_jitcmm_p, LinearOp(
    operands=('weights', 'stream', 'B'), events=True, call=bind_binary_jitcmm, float_call=bind_jitcmm,
    weight_cotangent=reference.param_cotangent(bind_jitcmm), mm_call=bind_binary_jitcmm, is_mm=True))
