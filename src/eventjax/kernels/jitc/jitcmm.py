"""``jitcmm``: a just-in-time connectivity (JITC) matrix times a dense float matrix."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.jitc import reference
from eventjax.kernels.jitc.arguments import check_jitc_call

__all__ = ['jitcmm']


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
    return _jitcmm.bind(weights, stream, B, shape=shape, transpose=transpose, law=law, backend=backend)


_jitcmm = Operator('jitcmm', __package__, ('weights', 'stream', 'B'), events=False, matrix=True,
                   weight_cotangent=reference.param_cotangent(lambda *args, **static: _jitcmm.bind(*args, **static)))
