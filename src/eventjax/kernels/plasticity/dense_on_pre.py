"""``dense_on_pre``: update a dense weight matrix on presynaptic events."""

from __future__ import annotations

from eventjax.kernels.common.update import Update
from eventjax.kernels.plasticity.arguments import check_bounds, check_dense_weight, check_spikes, check_trace

__all__ = ['dense_on_pre']


def dense_on_pre(weight, pre_spike, post_trace, w_min=None, w_max=None, *, backend=None):
    """Update a dense ``(m, n)`` weight matrix on presynaptic events: ``W[i, :] += post_trace``.

    Only the rows with an event change; ``w_min`` / ``w_max`` bound the
    entries the update touched. The result aliases ``weight`` (in place under
    donation or in a ``lax.scan`` carry). Differentiable in ``weight`` and
    ``post_trace``.

    Args:
        weight: ``(m, n)`` floats.
        pre_spike: length ``m``; ``True`` or ``> 0`` is an event.
        post_trace: length ``n``, cast to the weights' dtype.
        w_min, w_max: optional bounds (Python numbers).
        backend: as for every operator.

    Returns:
        The updated ``weight``.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> ej.dense_on_pre(jnp.zeros((2, 2)), jnp.array([True, False]), jnp.array([.1, .2]))
        Array([[0.1, 0.2],
               [0. , 0. ]], dtype=float32)
    """
    who = 'dense_on_pre()'
    weight = check_dense_weight(who, weight)
    m, n = weight.shape
    pre_spike = check_spikes(who, 'pre_spike', pre_spike, m, 'rows of weight')
    post_trace = check_trace(who, 'post_trace', post_trace, n, 'columns of weight', weight.dtype)
    w_min, w_max = check_bounds(who, w_min, w_max)
    return _dense_on_pre.bind(weight, pre_spike, post_trace, w_min=w_min, w_max=w_max, backend=backend)


_dense_on_pre = Update('dense_on_pre', __package__, ('weight', 'pre_spike', 'post_trace'), trace='post_trace',
                       kernels=('numba', 'warp', 'pallas'))
