"""``binary_jitcmm``: a just-in-time connectivity (JITC) matrix times a dense matrix of events."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.jitc import reference
from eventjax.kernels.jitc.arguments import checked_call
from eventjax.kernels.jitc.jitcmm import _jitcmm

__all__ = ['binary_jitcmm']


def binary_jitcmm(weights, B, *, seed, prob, shape, law='homo', transpose=False, backend=None):
    """Multiply a JITC matrix ``A`` (``shape=(m, n)``) by a matrix of events.

    An entry of ``B`` is an event when it is ``True`` or ``> 0``. With
    ``transpose=True`` the numba kernel generates a row of ``A`` only when
    that row of ``B`` holds an event. The derivative with respect to ``B`` is
    that of :func:`jitcmm`.

    Args:
        B: ``(n, c)`` events (``(m, c)`` when ``transpose``), bool or numeric.
        weights, seed, prob, shape, law, transpose, backend: as in :func:`jitcmv`.

    Returns:
        ``(m, c)`` (``(n, c)`` when ``transpose``) in the weights' dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.binary_jitcmm(2.0, jnp.array([[True], [False], [True]]), seed=1, prob=1.0, shape=(2, 3))
        Array([[4.],
               [4.]], dtype=float32)
    """
    return checked_call(_binary_jitcmm, weights, B,
                        seed=seed, prob=prob, shape=shape, law=law, transpose=transpose, backend=backend)


_binary_jitcmm = Operator('binary_jitcmm', __package__, ('weights', 'stream', 'B'), events=True, matrix=True,
                          weight_cotangent=reference.param_cotangent(_jitcmm.bind),
                          float_op='jitcmm',
                          kernels=('numba', 'warp'))
