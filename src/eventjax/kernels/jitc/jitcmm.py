"""``jitcmm``: a just-in-time connectivity (JITC) matrix times a dense float matrix."""

from __future__ import annotations

import jax

from eventjax.backends import XLACustomKernel
from eventjax.kernels.common import LinearOp, register_rules
from eventjax.kernels.common.registration import register_numba, register_warp
from eventjax.kernels.jitc import reference
from eventjax.kernels.jitc.arguments import check_jitc_call

__all__ = ['bind_jitcmm', 'jitcmm']


def jitcmm(weights, B, *, seed, prob, shape, law='homo', transpose=False, backend=None):
    """Multiply a JITC matrix ``A`` (``shape=(m, n)``) by a dense matrix; ``A`` is generated, never stored.

    Args:
        weights: one weight (``law='homo'``), ``(low, high)`` (``'uniform'``)
            or ``(loc, scale)`` (``'normal'``).
        B: ``(n, c)`` (``(m, c)`` when ``transpose``).
        seed: integer scalar (may be traced).
        prob: connection probability in ``[0, 1]`` (a Python float).
        shape: ``(m, n)``.
        law: ``'homo'``, ``'uniform'`` or ``'normal'``.
        transpose: compute ``A.T @ B`` instead of ``A @ B``.
        backend: per-call backend (``'jax'``, ``'numba'``, ``'warp'``), or None.

    Returns:
        ``(m, c)`` (``(n, c)`` when ``transpose``) in ``result_type(weights, B)``.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.jitcmm(1.0, jnp.eye(3), seed=7, prob=1.0, shape=(2, 3))
        Array([[1., 1., 1.],
               [1., 1., 1.]], dtype=float32)
    """
    weights, stream, B, shape = check_jitc_call(
        'jitcmm()', weights, B, seed=seed, prob=prob, shape=shape, law=law, transpose=transpose,
        matrix=True, events=False)
    return bind_jitcmm(weights, stream, B, shape=shape, transpose=transpose, law=law, backend=backend)


def bind_jitcmm(weights, stream, B, *, shape, transpose, law, backend=None):
    """Bind the primitive on checked operands (what rules call)."""
    out = jax.ShapeDtypeStruct((shape[1] if transpose else shape[0], B.shape[1]), weights.dtype)
    return _jitcmm_p(weights, stream, B, outs=(out,), backend=backend, shape=shape, transpose=transpose,
                     law=law)[0]


def _numba_kernel(*, shape, transpose, law, outs):
    from eventjax.kernels.jitc import numba_impl
    return numba_impl.jitc_kernel(law=law, transpose=transpose, binary=False, matrix=True)


def _warp_kernel(dtypes, *, shape, transpose, law, outs):
    from eventjax.kernels.jitc import warp_impl
    return warp_impl.jitc_kernel(dtypes, law=law, transpose=transpose, binary=False, matrix=True, outs=outs)


_jitcmm_p = XLACustomKernel('jitcmm')
_jitcmm_p.def_jax_kernel(reference.jitcmm_kernel)
register_numba(_jitcmm_p, _numba_kernel)
register_warp(_jitcmm_p, _warp_kernel)
register_rules(_jitcmm_p, LinearOp(
    operands=('weights', 'stream', 'B'), events=False, call=bind_jitcmm, float_call=bind_jitcmm,
    weight_cotangent=reference.param_cotangent(bind_jitcmm), mm_call=bind_jitcmm, is_mm=True))
