"""``jitcmv``: a just-in-time connectivity (JITC) matrix times a dense float vector."""

from __future__ import annotations

import jax

from eventjax.backends import XLACustomKernel
from eventjax.kernels.common import LinearOp, register_rules
from eventjax.kernels.common.registration import register_numba, register_warp
from eventjax.kernels.jitc import reference
from eventjax.kernels.jitc.arguments import check_jitc_call
from eventjax.kernels.jitc.jitcmm import bind_jitcmm

__all__ = ['bind_jitcmv', 'jitcmv']


def jitcmv(weights, v, *, seed, prob, shape, law='homo', transpose=False, backend=None):
    """Multiply a JITC matrix ``A`` (``shape=(m, n)``) by a vector; ``A`` is generated, never stored.

    ``A`` is a pure function of ``(seed, prob, law, weights)``: every
    backend and both directions see the same matrix (see the JITC docs page).
    Each row holds about ``n * prob`` connections; the product costs about
    ``m * n * prob`` generated connections and O(m + n) memory.

    Args:
        weights: the law's parameters: one weight (``law='homo'``),
            ``(low, high)`` (``'uniform'``) or ``(loc, scale)`` (``'normal'``).
        v: length ``n`` (``m`` when ``transpose``).
        seed: integer scalar (may be traced, e.g. vmapped over).
        prob: connection probability in ``[0, 1]`` (a Python float).
        shape: ``(m, n)``.
        law: ``'homo'``, ``'uniform'`` or ``'normal'``.
        transpose: compute ``v @ A`` instead of ``A @ v``.
        backend: per-call backend (``'jax'``, ``'numba'``, ``'warp'``), or None.

    Returns:
        Length ``m`` (``n`` when ``transpose``), in ``result_type(weights, v)``.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.jitcmv(0.5, jnp.ones(4), seed=0, prob=1.0, shape=(2, 4))
        Array([2., 2.], dtype=float32)
    """
    weights, stream, v, shape = check_jitc_call(
        'jitcmv()', weights, v, seed=seed, prob=prob, shape=shape, law=law, transpose=transpose,
        matrix=False, events=False)
    return bind_jitcmv(weights, stream, v, shape=shape, transpose=transpose, law=law, backend=backend)


def bind_jitcmv(weights, stream, v, *, shape, transpose, law, backend=None):
    """Bind the primitive on checked operands (what rules call)."""
    out = jax.ShapeDtypeStruct((shape[1] if transpose else shape[0],), weights.dtype)
    return _jitcmv_p(weights, stream, v, outs=(out,), backend=backend, shape=shape, transpose=transpose,
                     law=law)[0]


def _numba_kernel(*, shape, transpose, law, outs):
    from eventjax.kernels.jitc import numba_impl
    return numba_impl.jitc_kernel(law=law, transpose=transpose, binary=False, matrix=False)


def _warp_kernel(dtypes, *, shape, transpose, law, outs):
    from eventjax.kernels.jitc import warp_impl
    return warp_impl.jitc_kernel(dtypes, law=law, transpose=transpose, binary=False, matrix=False, outs=outs)


_jitcmv_p = XLACustomKernel('jitcmv')
_jitcmv_p.def_jax_kernel(reference.jitcmv_kernel)
register_numba(_jitcmv_p, _numba_kernel)
register_warp(_jitcmv_p, _warp_kernel)
register_rules(_jitcmv_p, LinearOp(
    operands=('weights', 'stream', 'v'), events=False, call=bind_jitcmv, float_call=bind_jitcmv,
    weight_cotangent=reference.param_cotangent(bind_jitcmv), mm_call=bind_jitcmm, is_mm=False))
