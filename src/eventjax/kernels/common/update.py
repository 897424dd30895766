"""Declare an in-place update once: ``weights' = update(weights, *structure, events, trace)``.

The counterpart of :class:`~eventjax.kernels.common.operator.Operator` for
operators whose result is their first operand changed where events fall
(plasticity). The output aliases the weights (``input_output_aliases={0:
0}``): under ``jax.jit(..., donate_argnums=...)`` or in a ``lax.scan`` carry
the kernels write only the entries they touch; without donation XLA copies
the weights first, so the caller's array never changes.

Every backend computes the same thing, which the family's ``reference``
module states in JAX as ``delta(weights, *structure, events, trace) ->
(increment, touched)``: ``touched`` marks the stored entries the events
reach, and the result is ``where(touched, clip(weights + increment, w_min,
w_max), weights)`` (``None`` bounds: no bound). The JVP is built from the
same ``delta``: the update is linear in the weights and the trace except
where a bound clipped, whose derivative is 0.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax.interpreters import ad

from eventjax.kernels.common.operator import Declaration
from eventjax.primitive import split_params
from eventjax.primitive.tags import operator_tags

__all__ = ['Update', 'apply_bounds']


def apply_bounds(weights, increment, touched, w_min, w_max):
    """``where(touched, clip(weights + increment, w_min, w_max), weights)``; a None bound is no bound.

    Example:
        >>> apply_bounds(jnp.array([0.5, 0.5]), jnp.array([1., 1.]), jnp.array([True, False]), None, 1.0)
        Array([1. , 0.5], dtype=float32)
    """
    new = weights + increment
    if w_min is not None:
        new = jnp.where(new < w_min, jnp.asarray(w_min, new.dtype), new)  # NaN stays NaN, as in the kernels
    if w_max is not None:
        new = jnp.where(new > w_max, jnp.asarray(w_max, new.dtype), new)
    return jnp.where(touched, new, weights)


class Update(Declaration):
    """One in-place update operator: the declaration an update module ends with.

    Args:
        name: the primitive's name, also the stem of its kernels' names
            (``<family>.<backend>_impl.<name>_kernel``; the ``jax`` kernel is
            ``<family>.jax_impl.<name>_kernel``, or ``reference`` where the family has no ``jax_impl``).
        family: the family package (pass ``__package__``).
        operands: operand names in call order, the weights first.
        trace: the name of the trace operand (the one the update is linear in, besides the weights).
        kernels: the backends besides ``jax`` that have kernels.
        prepare: as for :class:`~eventjax.kernels.common.operator.Declaration`
            (``prepare(*operands) -> operands`` runs in JAX before the kernels,
            e.g. repairing unvalidated structure).

    The family's ``reference.<name>_delta(*operands, **static)`` returns
    ``(increment, touched)`` shaped like the weights; static parameters
    ``w_min`` and ``w_max`` are the bounds. The kernels of a backend whose
    bridge declares ``bounds_as_operand`` get them as one more operand after
    the others (``[w_min, w_max]`` in the weights' dtype, ``-inf`` / ``inf``
    for None), so one compiled kernel serves every pair; the other backends
    read the static parameters.

    Example::

        _csr_on_pre = Update('csr_on_pre', __package__,
                             ('weight', 'indices', 'indptr', 'pre_spike', 'post_trace'), trace='post_trace',
                             kernels=('numba', 'warp', 'pallas'))
    """

    in_place = {0: 0}
    bounds = True

    def __init__(self, name: str, family: str, operands: tuple[str, ...], *, trace: str,
                 kernels: tuple[str, ...], prepare: Callable | None = None):
        self._trace = tuple(operands).index(trace)
        super().__init__(name, family, operands, kernels=kernels, prepare=prepare)

    def out(self, weights, *rest, **static) -> jax.ShapeDtypeStruct:
        """The weights, updated."""
        return jax.ShapeDtypeStruct(weights.shape, weights.dtype)

    def rules(self) -> None:
        self.primitive.def_tags(*operator_tags(self.name), 'plasticity')
        ad.primitive_jvps[self.primitive.primitive] = self._jvp

    def _delta(self) -> Callable:
        """``reference.<name>_delta``: ``(increment, touched)`` in JAX, what every kernel computes."""
        return getattr(importlib.import_module(f'{self.family}.reference'), f'{self.name}_delta')

    def _jvp(self, primals, tangents, **params):
        backend, static = split_params(params)
        static.pop('input_output_aliases', None)
        out = self.bind(*primals, backend=backend, **static)
        if self._prepare is not None:  # the reference reads the operands every kernel sees
            primals = self._prepare(*primals)
        weights, t = primals[0], self._trace
        dw, dtrace = (ad.instantiate_zeros(tangents[i]) for i in (0, t))
        delta = self._delta()
        increment, touched = delta(*primals, **static)
        d_increment, _ = delta(*primals[:t], dtrace, *primals[t + 1:], **static)
        pre = weights + increment
        clipped = jnp.zeros(pre.shape, bool)
        if static.get('w_min') is not None:
            clipped |= pre < static['w_min']
        if static.get('w_max') is not None:
            clipped |= pre > static['w_max']
        dout = jnp.where(touched & clipped, jnp.zeros_like(dw), dw + jnp.where(touched, d_increment, 0))
        return [out], [dout]
