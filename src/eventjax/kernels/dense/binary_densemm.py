"""``binary_densemm``: a dense weight matrix times a matrix of events."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.dense import reference
from eventjax.kernels.dense.arguments import checked_call

__all__ = ['binary_densemm']


def binary_densemm(weights, spikes, *, transpose=False, backend=None, validate=True):
    """Multiply a dense ``(m, n)`` weight matrix by a matrix of events.

    An entry of ``spikes`` is an event when it is ``True`` or ``> 0``.

    Events, dtypes and bad indices follow the contract in :doc:`/semantics`.

    Args:
        spikes: ``(n, k)`` events (``(m, k)`` when ``transpose``), bool or numeric.
        weights, transpose, backend: as in :func:`binary_densemv`.
        validate: accepted for a uniform signature (dense weights have no
            index structure to check).

    Returns:
        ``(m, k)`` (``(n, k)`` when ``transpose``) in ``weights``' dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.binary_densemm(jnp.eye(2), jnp.array([[True, False], [False, False]]))
        Array([[1., 0.],
               [0., 0.]], dtype=float32)
    """
    return checked_call(_binary_densemm, weights, spikes, transpose=transpose, backend=backend, validate=validate)


_binary_densemm = Operator('binary_densemm', __package__, ('weights', 'spikes'),
                           events=True, matrix=True, weight_cotangent=reference.weight_cotangent,
                           float_op=reference.float_product, kernels=('numba', 'warp', 'pallas'))
