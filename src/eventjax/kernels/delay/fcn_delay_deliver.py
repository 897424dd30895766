"""``fcn_delay_deliver``: delayed delivery over a fixed number of connections per row."""

from __future__ import annotations

import jax.numpy as jnp

from eventjax.kernels.common.checks import check_index_array, check_shape, is_concrete, validate_fcn_indices
from eventjax.kernels.common.narrowing import host_integers
from eventjax.kernels.common.units import attach, split
from eventjax.kernels.delay.arguments import check_delay_call, check_steps
from eventjax.kernels.delay.csr_delay_deliver import _csr_delay_deliver

__all__ = ['fcn_delay_deliver']


def fcn_delay_deliver(ring, events, weights, indices, delays, t, *, shape, weighted=None, backend=None,
                      validate=True):
    """:func:`~eventjax.csr_delay_deliver` for a matrix with ``k`` connections per row.

    ``indices`` is ``(m, k)``; ``weights`` and ``delays`` are ``(m, k)`` or
    one shared value. Row ``i`` owns entries ``[i * k, (i + 1) * k)`` of the
    flattened arrays, so the CSR kernels run on them unchanged (no copy).

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.fcn_delay_deliver(jnp.zeros((2, 3)), jnp.array([True, False]), 1.0, jnp.array([[0, 2], [1, 1]]),
        ...                      jnp.array([[1, 1], [1, 1]]), 0, shape=(2, 3))
        Array([[0., 0., 0.],
               [1., 0., 1.]], dtype=float32)
    """
    who = 'fcn_delay_deliver()'
    rows, cols = check_shape(who, shape)
    check_steps(who, 'delays', delays)
    indices = check_index_array(who, 'indices', indices, rank=2)
    m, k = indices.shape
    if m != rows:
        raise ValueError(f'{who}: indices must have shape ({rows}, k) (one row per row of shape), '
                         f'got {indices.shape}.')
    indptr = jnp.arange(m + 1, dtype=indices.dtype) * k
    (weights, weight_unit) = split(weights)
    # A NumPy value stays NumPy until check_delay_call narrows it (jnp.asarray would wrap an int64 first).
    delays = jnp.asarray(delays) if host_integers(delays) is None else host_integers(delays)
    weights = jnp.asarray(weights)
    # Flattened, a (k, m) array has the right length but pairs each weight with another synapse.
    for name, a in (('weights', weights), ('delays', delays)):
        if a.size != 1 and a.shape != (m, k):
            raise ValueError(f'{who}: {name} must have shape ({m}, {k}) (one per entry of indices) or be one '
                             f'shared value, got {a.shape}.')
    if validate and is_concrete(indices):
        validate_fcn_indices(who, indices, cols)
    flat = lambda a: a.reshape(-1) if a.size != 1 or m * k == 1 else a.reshape(1)
    ring, events, data, indices, indptr, delays, t, shape, weighted, unit = check_delay_call(
        who, ring, events, attach(flat(weights), weight_unit), indices.reshape(-1), indptr, flat(delays), t,
        shape=shape, weighted=weighted, validate=validate)
    return attach(_csr_delay_deliver.bind(ring, events, data, indices, indptr, delays, t, shape=shape,
                                          weighted=weighted, backend=backend), unit)
