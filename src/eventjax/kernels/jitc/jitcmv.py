"""``jitcmv``: a just-in-time connectivity (JITC) matrix times a dense float vector."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.jitc import reference
from eventjax.kernels.jitc.arguments import checked_call

__all__ = ['jitcmv']


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
    return checked_call(_jitcmv, weights, v,
                        seed=seed, prob=prob, shape=shape, law=law, transpose=transpose, backend=backend)


_jitcmv = Operator('jitcmv', __package__, ('weights', 'stream', 'v'), events=False, matrix=False,
                   weight_cotangent=reference.param_cotangent(lambda *args, **static: _jitcmv.bind(*args, **static)),
                   mm_op='jitcmm',
                   kernels=('numba', 'warp'))
