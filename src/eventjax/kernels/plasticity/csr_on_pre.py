"""``csr_on_pre``: on presynaptic events, add the postsynaptic trace to the stored weights of their rows."""

from __future__ import annotations

from eventjax.kernels.common.update import Update
from eventjax.kernels.plasticity.arguments import (
    check_bounds,
    check_csr_structure,
    check_plastic_weights,
    check_shape,
    check_spikes,
    check_trace,
    longest_segment,
    repair_structure,
)

__all__ = ['csr_on_pre']


def csr_on_pre(weight, indices, indptr, pre_spike, post_trace, w_min=None, w_max=None, *, shape, backend=None,
               validate=True, max_row_length=None):
    """Update CSR weights on presynaptic events: ``W[i, j] += post_trace[j]`` for every stored ``j`` of row ``i``.

    Only the rows with an event are visited, and only their stored entries
    change; ``w_min`` / ``w_max`` bound the entries the update touched
    (the others keep their value, even outside the bounds). The result
    aliases ``weight``: under ``jax.jit(..., donate_argnums=...)`` or as a
    ``lax.scan`` carry nothing else is copied. Differentiable in ``weight``
    and ``post_trace`` (0 where a bound clipped).

    Events, dtypes and bad structure follow :doc:`/semantics`.

    Args:
        weight: one float weight per stored entry, length ``nnz`` (a single
            shared weight cannot learn: it raises ``ValueError``).
        indices, indptr: the CSR structure of ``shape=(m, n)``.
        pre_spike: length ``m``; ``True`` or ``> 0`` is an event.
        post_trace: length ``n``, cast to the weights' dtype.
        w_min, w_max: optional bounds (Python numbers).
        shape: ``(m, n)``.
        backend: ``'jax'``, ``'numba'``, ``'warp'``, ``'pallas'`` (gpu; the cpu in interpret mode)
            (None: resolved as for every operator).
        validate: check concrete structure by value.
        max_row_length: the most entries a row holds, for the event-driven
            ``jax`` kernel when ``indptr`` is traced (read from it otherwise);
            a longer row is read in more passes (slower, never cut short).

    Returns:
        The updated ``weight``.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> w, idx, ptr = jnp.array([.5, .3, .8]), jnp.array([0, 1, 1]), jnp.array([0, 2, 3])
        >>> ej.csr_on_pre(w, idx, ptr, jnp.array([True, False]), jnp.array([.1, .2]), shape=(2, 2))
        Array([0.6, 0.5, 0.8], dtype=float32)
    """
    who = 'csr_on_pre()'
    m, n = check_shape(who, shape)
    max_row = longest_segment(who, indptr, max_row_length, 'max_row_length')
    indices, indptr = check_csr_structure(who, indices, indptr, m, n, validate, repair=False)
    weight = check_plastic_weights(who, weight, (indices.shape[0],), 'one per entry of indices')
    pre_spike = check_spikes(who, 'pre_spike', pre_spike, m, 'rows of shape')
    post_trace = check_trace(who, 'post_trace', post_trace, n, 'columns of shape', weight.dtype)
    w_min, w_max = check_bounds(who, w_min, w_max)
    return _csr_on_pre.bind(weight, indices, indptr, pre_spike, post_trace, shape=(m, n), w_min=w_min, w_max=w_max,
                            max_row=max_row, backend=backend)


_csr_on_pre = Update('csr_on_pre', __package__, ('weight', 'indices', 'indptr', 'pre_spike', 'post_trace'),
                     trace='post_trace', kernels=('numba', 'warp', 'pallas'), prepare=repair_structure)
