"""``jitcmm``: a just-in-time connectivity (JITC) matrix times a dense float matrix."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.jitc import reference
from eventjax.kernels.jitc.arguments import checked_call

__all__ = ['jitcmm']


def jitcmm(weights, B, *, seed, prob, shape, law='homo', transpose=False, backend=None):
    """Multiply a JITC matrix ``A`` (``shape=(m, n)``) by a dense matrix; ``A`` is generated, never stored.

    Args:
        B: ``(n, c)`` (``(m, c)`` when ``transpose``).
        weights, seed, prob, shape, law, transpose, backend: as in :func:`jitcmv`.

    Returns:
        ``(m, c)`` (``(n, c)`` when ``transpose``) in ``result_type(weights, B)``.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.jitcmm(1.0, jnp.eye(3), seed=7, prob=1.0, shape=(2, 3))
        Array([[1., 1., 1.],
               [1., 1., 1.]], dtype=float32)
    """
    return checked_call(_jitcmm, weights, B,
                        seed=seed, prob=prob, shape=shape, law=law, transpose=transpose, backend=backend)


_jitcmm = Operator('jitcmm', __package__, ('weights', 'stream', 'B'), events=False, matrix=True,
                   weight_cotangent=reference.param_cotangent(lambda *args, **static: _jitcmm.bind(*args, **static)),
                   kernels=('numba', 'warp'))
