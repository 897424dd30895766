"""``binary_jitcmv``: a just-in-time connectivity (JITC) matrix times a vector of events."""

from __future__ import annotations

import jax

from eventjax.backends import XLACustomKernel
from eventjax.kernels.common import LinearOp, register_rules
from eventjax.kernels.common.registration import register_numba, register_warp
from eventjax.kernels.jitc import reference
from eventjax.kernels.jitc.arguments import check_jitc_call
from eventjax.kernels.jitc.binary_jitcmm import bind_binary_jitcmm
from eventjax.kernels.jitc.jitcmv import bind_jitcmv

__all__ = ['binary_jitcmv', 'bind_binary_jitcmv']


def binary_jitcmv(weights, spikes, *, seed, prob, shape, law='homo', transpose=False, backend=None):
    """Multiply a JITC matrix ``A`` (``shape=(m, n)``) by a vector of events.

    An entry of ``spikes`` is an event when it is ``True`` or ``> 0``; its
    value is otherwise ignored, and a connection without an event adds
    nothing. With ``transpose=True`` (presynaptic events into postsynaptic
    currents) the numba and warp kernels generate only the rows of the
    events: the cost is events x ``n * prob``, never the matrix size. The
    derivative with respect to ``spikes`` is that of :func:`jitcmv`.

    Args:
        weights: one weight (``law='homo'``), ``(low, high)`` (``'uniform'``)
            or ``(loc, scale)`` (``'normal'``).
        spikes: length ``n`` (``m`` when ``transpose``), bool or numeric.
        seed: integer scalar (may be traced).
        prob: connection probability in ``[0, 1]`` (a Python float).
        shape: ``(m, n)``.
        law: ``'homo'``, ``'uniform'`` or ``'normal'``.
        transpose: compute ``spikes @ A`` instead of ``A @ spikes``.
        backend: per-call backend (``'jax'``, ``'numba'``, ``'warp'``), or None.

    Returns:
        Length ``m`` (``n`` when ``transpose``), in the weights' dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.binary_jitcmv(0.5, jnp.array([True, False]), seed=0, prob=1.0, shape=(2, 3), transpose=True)
        Array([0.5, 0.5, 0.5], dtype=float32)
    """
    weights, stream, spikes, shape = check_jitc_call(
        'binary_jitcmv()', weights, spikes, seed=seed, prob=prob, shape=shape, law=law, transpose=transpose,
        matrix=False, events=True)
    return bind_binary_jitcmv(weights, stream, spikes, shape=shape, transpose=transpose, law=law, backend=backend)


def bind_binary_jitcmv(weights, stream, spikes, *, shape, transpose, law, backend=None):
    """Bind the primitive on checked operands (what rules call)."""
    out = jax.ShapeDtypeStruct((shape[1] if transpose else shape[0],), weights.dtype)
    return _binary_jitcmv_p(weights, stream, spikes, outs=(out,), backend=backend, shape=shape,
                            transpose=transpose, law=law)[0]


def _numba_kernel(*, shape, transpose, law, outs):
    from eventjax.kernels.jitc import numba_impl
    return numba_impl.jitc_kernel(law=law, transpose=transpose, binary=True, matrix=False)


def _warp_kernel(dtypes, *, shape, transpose, law, outs):
    from eventjax.kernels.jitc import warp_impl
    return warp_impl.jitc_kernel(dtypes, law=law, transpose=transpose, binary=True, matrix=False, outs=outs)


_binary_jitcmv_p = XLACustomKernel('binary_jitcmv')
_binary_jitcmv_p.def_jax_kernel(reference.binary_jitcmv_kernel)
register_numba(_binary_jitcmv_p, _numba_kernel)
register_warp(_binary_jitcmv_p, _warp_kernel)
register_rules(_binary_jitcmv_p, LinearOp(
    operands=('weights', 'stream', 'spikes'), events=True, call=bind_binary_jitcmv, float_call=bind_jitcmv,
    weight_cotangent=reference.param_cotangent(bind_jitcmv), mm_call=bind_binary_jitcmm, is_mm=False))
