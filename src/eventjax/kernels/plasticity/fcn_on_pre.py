"""``fcn_on_pre``: update fixed-number-of-connections weights on the events of their rows."""

from __future__ import annotations

from eventjax.kernels.common.update import Update
from eventjax.kernels.plasticity.arguments import (
    check_bounds,
    check_fcn_structure,
    check_plastic_weights,
    check_shape,
    check_spikes,
    check_trace,
)

__all__ = ['fcn_on_pre']


def fcn_on_pre(weight, indices, pre_spike, post_trace, w_min=None, w_max=None, *, shape, backend=None,
               validate=True):
    """Update FCN weights on the events of their rows: ``W[i, c] += post_trace[indices[i, c]]``.

    ``weight`` and ``indices`` have shape ``(m, k)``: row ``i`` connects to
    the ``k`` targets ``indices[i]``. Only the rows with an event change.
    The same call updates a fixed-number-of-*presynaptic*-partners layout on
    postsynaptic events (rows are then the postsynaptic neurons and the
    trace is presynaptic). Bounds, aliasing and derivatives as in
    :func:`csr_on_pre`.

    Args:
        weight: ``(m, k)`` floats, one per connection.
        indices: ``(m, k)`` targets in ``[0, n)``.
        pre_spike: length ``m``; ``True`` or ``> 0`` is an event.
        post_trace: length ``n``, cast to the weights' dtype.
        w_min, w_max, backend, validate: as in :func:`csr_on_pre`.
        shape: ``(m, n)``.

    Returns:
        The updated ``weight``.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> w, idx = jnp.zeros((2, 2)), jnp.array([[0, 1], [1, 2]])
        >>> ej.fcn_on_pre(w, idx, jnp.array([False, True]), jnp.array([.1, .2, .3]), shape=(2, 3))
        Array([[0. , 0. ],
               [0.2, 0.3]], dtype=float32)
    """
    who = 'fcn_on_pre()'
    m, n = check_shape(who, shape)
    indices = check_fcn_structure(who, indices, m, n, validate)
    weight = check_plastic_weights(who, weight, indices.shape, 'one per entry of indices')
    pre_spike = check_spikes(who, 'pre_spike', pre_spike, m, 'rows of shape')
    post_trace = check_trace(who, 'post_trace', post_trace, n, 'columns of shape', weight.dtype)
    w_min, w_max = check_bounds(who, w_min, w_max)
    return _fcn_on_pre.bind(weight, indices, pre_spike, post_trace, shape=(m, n), w_min=w_min, w_max=w_max,
                            backend=backend)


_fcn_on_pre = Update('fcn_on_pre', __package__, ('weight', 'indices', 'pre_spike', 'post_trace'),
                     trace='post_trace', kernels=('numba', 'warp', 'pallas'))
