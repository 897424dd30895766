"""``binary_fcnmv``: a fixed-connection-number (FCN) matrix times a vector of events."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.fcn import reference
from eventjax.kernels.fcn.arguments import checked_call

__all__ = ['binary_fcnmv']


def binary_fcnmv(weights, indices, spikes, *, shape, transpose=False, backend=None, validate=True):
    """Multiply an FCN matrix ``A`` (``shape=(m, n)``, ``k`` connections per row) by a vector of events.

    An entry of ``spikes`` is an event when it is ``True`` or ``> 0``; its
    value is otherwise ignored. With ``transpose=True`` (presynaptic events
    into postsynaptic currents) the ``numba`` kernel visits only the rows of
    the events, so its cost grows with events x ``k``. The derivative with
    respect to ``spikes`` is that of :func:`fcnmv`.

    Events, dtypes and bad indices follow the contract in :doc:`/semantics`.

    Args:
        spikes: length ``n`` (``m`` when ``transpose``), bool or numeric.
        weights, indices, shape, transpose, backend, validate: as in :func:`fcnmv`.

    Returns:
        Length ``m`` (``n`` when ``transpose``): :func:`fcnmv` of the event indicator.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> weights, indices = jnp.array([[1., 2.], [3., 4.]]), jnp.array([[0, 1], [1, 2]])
        >>> ej.binary_fcnmv(weights, indices, jnp.array([True, False]), shape=(2, 3), transpose=True)
        Array([1., 2., 0.], dtype=float32)
    """
    return checked_call(_binary_fcnmv, weights, indices, spikes,
                        shape=shape, transpose=transpose, backend=backend, validate=validate)


_binary_fcnmv = Operator('binary_fcnmv', __package__, ('weights', 'indices', 'spikes'),
                         events=True, matrix=False, weight_cotangent=reference.entry_cotangent,
                         float_op='fcnmv', mm_op='binary_fcnmm',
                         kernels=('numba', 'warp', 'pallas', 'cpp', 'cuda'))
