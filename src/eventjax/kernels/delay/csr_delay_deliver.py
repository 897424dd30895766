"""``csr_delay_deliver``: deliver the synapses of the rows with events into a ring buffer of future steps."""

from __future__ import annotations

from eventjax.kernels.common.units import attach
from eventjax.kernels.delay import reference
from eventjax.kernels.delay.arguments import check_delay_call, repair_structure
from eventjax.kernels.delay.delivery import Delivery

__all__ = ['csr_delay_deliver']


def csr_delay_deliver(ring, events, data, indices, indptr, delays, t, *, shape, weighted=None, backend=None,
                      validate=True):
    """Deliver each event's synapses ``delays`` steps ahead into a ring buffer.

    For every stored entry ``e`` (column ``indices[e]``) of every row ``i``
    of the CSR matrix (``shape=(m, n)``, rows presynaptic) whose event is
    active::

        ring[(t + delays[e]) % L, indices[e]] += data[e] * value(events[i])

    with ``L = ring.shape[0]``. Binary (``weighted=False``): an event is
    ``True`` or ``> 0`` and its value 1. Weighted (``weighted=True``): an
    event is a non-zero entry and its value the entry itself (zeros are
    skipped, never multiplied). ``None``: weighted for
    :class:`~eventjax.GradedEvents`, binary otherwise (an ``EventArray`` or a
    plain array). Only the rows of the events are visited. A model reads row
    ``t % L`` as this step's input, clears it, then delivers.

    Delays are at least 1 step (0 would land in the row just read); size the
    ring as ``max(delays) + 1`` steps. A concrete delay outside
    ``[1, L)`` raises ``ValueError``; under ``jit`` (or ``validate=False``)
    such a synapse is dropped, as are out-of-range columns (see
    :doc:`/semantics`). Differentiable with respect to ``ring``, ``data``
    and (weighted) the event values; ``vmap`` delivers per batch element.

    Args:
        ring: ``(L, n)`` float, the input due at each of the next ``L`` steps.
        events: length ``m``: bool, integer or float, or an ``EventArray`` / ``GradedEvents``.
        data: one weight per stored entry, or one shared weight.
        indices, indptr: the CSR structure of the ``(m, n)`` matrix.
        delays: integer steps, one per stored entry or one shared.
        t: the current step (an integer, traced or not).
        shape: ``(m, n)``.
        weighted: see above.
        backend: per-call backend, or None.
        validate: check concrete structure and delays by value.

    Returns:
        The updated ring: same shape and dtype. brainunit Quantities work as
        in the products: what is delivered (``data``'s unit, times the
        events' unit when weighted) is converted into the ring's unit, and
        the ring comes back in its unit (a different dimension is
        brainunit's ``UnitMismatchError``).

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> data, indices, indptr = jnp.array([1., 2.]), jnp.array([0, 1]), jnp.array([0, 2, 2])
        >>> ring = jnp.zeros((3, 2))
        >>> ej.csr_delay_deliver(ring, jnp.array([True, False]), data, indices, indptr, jnp.array([1, 2]), 0,
        ...                      shape=(2, 2))
        Array([[0., 0.],
               [1., 0.],
               [0., 2.]], dtype=float32)
    """
    ring, events, data, indices, indptr, delays, t, shape, weighted, unit = check_delay_call(
        'csr_delay_deliver()', ring, events, data, indices, indptr, delays, t, shape=shape, weighted=weighted,
        validate=validate)
    return attach(_csr_delay_deliver.bind(ring, events, data, indices, indptr, delays, t, shape=shape,
                                          weighted=weighted, backend=backend), unit)


_csr_delay_deliver = Delivery('csr_delay_deliver', __package__,
                              ('ring', 'events', 'data', 'indices', 'indptr', 'delays', 't'),
                              data_cotangent=reference.data_cotangent, events_cotangent=reference.events_cotangent,
                              prepare=repair_structure, kernels=('numba', 'warp', 'pallas'))
