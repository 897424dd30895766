"""``dense_on_post``: update a dense weight matrix on postsynaptic events."""

from __future__ import annotations

from eventjax.kernels.common.update import Update
from eventjax.kernels.plasticity.arguments import check_bounds, check_dense_weight, check_spikes, check_trace

__all__ = ['dense_on_post']


def dense_on_post(weight, pre_trace, post_spike, w_min=None, w_max=None, *, backend=None):
    """Update a dense ``(m, n)`` weight matrix on postsynaptic events: ``W[:, j] += pre_trace``.

    Only the columns with an event change; bounds, aliasing and derivatives
    as in :func:`dense_on_pre`.

    Args:
        weight: ``(m, n)`` floats.
        pre_trace: length ``m``, cast to the weights' dtype.
        post_spike: length ``n``; ``True`` or ``> 0`` is an event.
        w_min, w_max, backend: as in :func:`dense_on_pre`.

    Returns:
        The updated ``weight``.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.dense_on_post(jnp.zeros((2, 2)), jnp.array([.1, .2]), jnp.array([False, True]))
        Array([[0. , 0.1],
               [0. , 0.2]], dtype=float32)
    """
    who = 'dense_on_post()'
    weight = check_dense_weight(who, weight)
    m, n = weight.shape
    pre_trace = check_trace(who, 'pre_trace', pre_trace, m, 'rows of weight', weight.dtype)
    post_spike = check_spikes(who, 'post_spike', post_spike, n, 'columns of weight')
    w_min, w_max = check_bounds(who, w_min, w_max)
    return _dense_on_post.bind(weight, pre_trace, post_spike, w_min=w_min, w_max=w_max, backend=backend)


_dense_on_post = Update('dense_on_post', __package__, ('weight', 'pre_trace', 'post_spike'), trace='pre_trace',
                        kernels=('numba', 'warp', 'pallas'))
