"""Declare a delivery operator once: ``ring' = deliver(ring, events, weights, *structure, delays, t)``.

A delivery adds each active synapse's weight (times the event's value when
weighted) into a ring buffer of ``L`` future steps, ``L`` the ring's first
axis. It is linear in the ring (the identity), in the weights and, weighted,
in the event values, so its rules are:

- JVP: the ring's tangent passes through; the weights' tangent is delivered
  into a zero ring; the events' tangent is delivered weighted (binary events
  differentiate as weighted ones, as binary products differentiate as float
  products);
- transpose: the ring's cotangent is the cotangent itself; the weights' and
  the events' are gathers from the cotangent (``reference``);
- batching: :func:`~eventjax.general_batching_rule` (one delivery per batch element).

:class:`Delivery` registers the kernels the way
:class:`~eventjax.kernels.common.Operator` does (``<family>.<backend>_impl.<name>_kernel``),
with one step before the kernels of some backends: ``prepare`` repairs
unvalidated structure in JAX (where the backend's bridge does not declare
that its kernels repair inside).

The result is the ring updated in place: every call binds with
``input_output_aliases={0: 0}``, so the numba and warp kernels add into the
ring's own buffer (pallas aliases it in its own call, and the jax kernel is
a scatter XLA runs in place). Under ``jax.jit(..., donate_argnums=...)`` or
as a ``lax.scan`` carry a delivery then touches only the synapses of the
events; without donation XLA copies the ring first, so the caller's array
never changes.
"""

from __future__ import annotations

from collections.abc import Callable

import jax
import jax.numpy as jnp
from jax.interpreters import ad

from eventjax.kernels.common.operator import Declaration
from eventjax.primitive import defjvp_by_name, general_batching_rule, split_params

__all__ = ['Delivery']


class Delivery(Declaration):
    """One delivery operator: the declaration its module ends with.

    Args:
        name: the primitive's name and the stem of its kernels' names.
        family: the family package (``__package__``).
        operands: names in call order: ``ring``, ``events``, the weights,
            the structure, ``delays``, ``t``.
        data_cotangent: ``(ct, events, *structure, delays, t, **static)``, one cotangent per stored weight.
        events_cotangent: ``(ct, weights, *structure, delays, t, **static)``, the event values' cotangent.
        kernels: the backends besides ``jax``.
        prepare: as for :class:`~eventjax.kernels.common.operator.Declaration`.
    """

    in_place = {0: 0}  # every call updates the ring (operand 0) in place as output 0

    def __init__(self, name: str, family: str, operands: tuple[str, ...], *, data_cotangent: Callable,
                 events_cotangent: Callable, kernels: tuple[str, ...], prepare: Callable):
        self.data_cotangent, self.events_cotangent = data_cotangent, events_cotangent
        super().__init__(name, family, operands, kernels=kernels, prepare=prepare)

    def out(self, ring, *operands, **static) -> jax.ShapeDtypeStruct:
        """The ring, updated."""
        return jax.ShapeDtypeStruct(ring.shape, ring.dtype)

    def rules(self) -> None:
        _register_rules(self)


def _register_rules(op: Delivery) -> None:
    prim = op.primitive
    prim.def_tags(op.family.rsplit('.', 1)[-1], 'delivery')
    ring, events, weights = op.operands[:3]
    defjvp_by_name(prim, op.operands, **{
        ring: lambda dr, *args, **params: [dr],
        weights: lambda dw, r, x, w, *rest, **params: [_deliver_into_zeros(op, r, x, dw, rest, params, None)],
        events: lambda dx, r, x, w, *rest, **params: [
            _deliver_into_zeros(op, r, dx.astype(r.dtype), w, rest, params, True)],
    })
    prim.def_transpose_rule(lambda cts, *args, **params: _transpose(op, cts, *args, **params))
    prim.def_batching_rule(lambda args, axes, **params: general_batching_rule(prim, args, axes, **params))


def _deliver_into_zeros(op, ring, events, weights, rest, params, weighted):
    backend, static = split_params(params)
    if weighted is not None:
        static = {**static, 'weighted': weighted}
    zeros = jnp.zeros(ring.aval.shape if ad.is_undefined_primal(ring) else ring.shape, _dtype(ring))
    return op.bind(zeros, events, weights, *rest, backend=backend, **static)


def _static(params):
    """The caller's static parameters of a bind, without the in-place declaration every bind adds."""
    _, static = split_params(params)
    static.pop('input_output_aliases', None)
    return static


def _dtype(x):
    return x.aval.dtype if ad.is_undefined_primal(x) else x.dtype


def _transpose(op, cts, ring, events, weights, *rest, **params):
    (ct,) = cts
    result = [None] * (3 + len(rest))
    if type(ct) is ad.Zero:
        return result
    static = _static(params)
    structure = rest
    if ad.is_undefined_primal(weights) and ad.is_undefined_primal(events):
        raise ValueError(f'{op.name}: the delivery is not linear in {op.operands[2]} and {op.operands[1]} together; '
                         'differentiate with respect to one at a time.')
    if ad.is_undefined_primal(ring):
        result[0] = ct
    if ad.is_undefined_primal(events):
        if not static['weighted']:
            raise ValueError(f'{op.name}: binary delivery is not linear in its events; its derivative goes through '
                             'weighted delivery.')
        result[1] = op.events_cotangent(ct, weights, *structure, **static).astype(events.aval.dtype)
    if ad.is_undefined_primal(weights):
        ct_w = op.data_cotangent(ct, events, *structure, **static)
        if ct_w.shape != weights.aval.shape:
            ct_w = ct_w.sum().reshape(weights.aval.shape)
        result[2] = ct_w.astype(weights.aval.dtype)
    return result
