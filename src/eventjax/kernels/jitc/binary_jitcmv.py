"""``binary_jitcmv``: a just-in-time connectivity (JITC) matrix times a vector of events."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.jitc import reference
from eventjax.kernels.jitc.arguments import checked_call
from eventjax.kernels.jitc.jitcmv import _jitcmv

__all__ = ['binary_jitcmv']


def binary_jitcmv(weights, spikes, *, seed, prob, shape, law='homo', transpose=False, backend=None):
    """Multiply a JITC matrix ``A`` (``shape=(m, n)``) by a vector of events.

    An entry of ``spikes`` is an event when it is ``True`` or ``> 0``; its
    value is otherwise ignored, and a connection without an event adds
    nothing. With ``transpose=True`` (presynaptic events into postsynaptic
    currents) the numba and warp kernels generate only the rows of the
    events: the cost is events x ``n * prob``, never the matrix size. The
    derivative with respect to ``spikes`` is that of :func:`jitcmv`.

    Args:
        spikes: length ``n`` (``m`` when ``transpose``), bool or numeric.
        weights, seed, prob, shape, law, transpose, backend: as in :func:`jitcmv`.

    Returns:
        Length ``m`` (``n`` when ``transpose``), in the weights' dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.binary_jitcmv(0.5, jnp.array([True, False]), seed=0, prob=1.0, shape=(2, 3), transpose=True)
        Array([0.5, 0.5, 0.5], dtype=float32)
    """
    return checked_call(_binary_jitcmv, weights, spikes,
                        seed=seed, prob=prob, shape=shape, law=law, transpose=transpose, backend=backend)


_binary_jitcmv = Operator('binary_jitcmv', __package__, ('weights', 'stream', 'spikes'), events=True, matrix=False,
                          weight_cotangent=reference.param_cotangent(_jitcmv.bind),
                          float_op='jitcmv',
                          mm_op='binary_jitcmm',
                          kernels=('numba', 'warp'))
