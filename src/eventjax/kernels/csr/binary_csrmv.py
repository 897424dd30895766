"""``binary_csrmv``: a CSR sparse matrix times a vector of events."""

from __future__ import annotations

from eventjax.kernels.common import Operator
from eventjax.kernels.common.keywords import operand
from eventjax.kernels.csr import reference
from eventjax.kernels.csr.arguments import checked_call, repair_structure

__all__ = ['binary_csrmv']


def binary_csrmv(data, indices, indptr, spikes=None, *, shape, transpose=False, backend=None, validate=True,
                 v=None):
    """Multiply a CSR matrix ``A`` (``shape=(m, n)``) by a vector of events.

    An entry of ``spikes`` is an event when it is ``True`` or ``> 0``; its
    value is otherwise ignored. With ``transpose=True`` (presynaptic events
    into postsynaptic currents) the CPU kernels visit only the rows of the
    events, so the cost grows with events x connections per row. The
    derivative with respect to ``spikes`` is that of :func:`csrmv`.

    Events, dtypes and bad indices follow the contract in :doc:`/semantics`.

    Args:
        spikes: length ``n`` (``m`` when ``transpose``), bool or numeric.
        data, indices, indptr, shape, transpose, backend, validate: as in :func:`csrmv`.
        v: brainevent's name for ``spikes``; warns, and goes in 0.3.0.

    Returns:
        Length ``m`` (``n`` when ``transpose``): :func:`csrmv` of the event indicator.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> data, indices, indptr = jnp.array([1., 2., 3.]), jnp.array([0, 1, 1]), jnp.array([0, 2, 3])
        >>> ej.binary_csrmv(data, indices, indptr, jnp.array([True, False]), shape=(2, 2), transpose=True)
        Array([1., 2.], dtype=float32)
    """
    spikes = operand('binary_csrmv', 'spikes', spikes, 'v', v)
    return checked_call(_binary_csrmv, data, indices, indptr, spikes,
                        shape=shape, transpose=transpose, backend=backend, validate=validate)


_binary_csrmv = Operator('binary_csrmv', __package__, ('data', 'indices', 'indptr', 'spikes'),
                         events=True, matrix=False, weight_cotangent=reference.entry_cotangent,
                         float_op='csrmv', mm_op='binary_csrmm',
                         kernels=('numba', 'warp', 'pallas', 'cpp', 'cuda'), prepare=repair_structure)
