"""``binary_densemv``: a dense weight matrix times a vector of events."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.dense import reference
from eventjax.kernels.dense.arguments import checked_call

__all__ = ['binary_densemv']


def binary_densemv(weights, spikes, *, transpose=False, backend=None, validate=True):
    """Multiply a dense ``(m, n)`` weight matrix by a vector of events.

    An entry of ``spikes`` is an event when it is ``True`` or ``> 0``; the
    product sums the weight columns (rows, when ``transpose``) of the events.
    With ``transpose=True`` the CPU kernels visit only the event rows.

    Events, dtypes and bad indices follow the contract in :doc:`/semantics`.

    Args:
        weights: ``(m, n)`` float weights.
        spikes: length ``n`` (``m`` when ``transpose``), bool or numeric.
        transpose: compute ``spikes @ weights``.
        backend: per-call backend, or None.
        validate: accepted for a uniform signature (dense weights have no
            index structure to check).

    Returns:
        Length ``m`` (``n`` when ``transpose``) in ``weights``' dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.binary_densemv(jnp.array([[1., 2.], [3., 4.]]), jnp.array([0.0, 5.0]))
        Array([2., 4.], dtype=float32)
    """
    return checked_call(_binary_densemv, weights, spikes, transpose=transpose, backend=backend, validate=validate)


_binary_densemv = Operator('binary_densemv', __package__, ('weights', 'spikes'),
                           events=True, matrix=False, weight_cotangent=reference.weight_cotangent,
                           float_op=reference.float_product, mm_op='binary_densemm',
                           kernels=('numba', 'warp', 'pallas'))
