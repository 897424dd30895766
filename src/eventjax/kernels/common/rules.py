"""Autodiff and batching rules shared by every ``weights x events`` operator.

Every standard operator has the form ``y = op(weights, *structure, x)``:
linear in ``weights`` and, for float operators, linear in ``x``; the
``structure`` operands (indices, indptr) are integers and never
differentiated. A binary operator reads ``x`` through the event indicator;
its derivative with respect to ``x`` is defined as the float operator's.
:func:`register_rules` derives the JVP, transpose and batching rules from an
operator's declaration (keyed by operand name), so every family shares this
one piece of code.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax.interpreters import ad

from eventjax.kernels.common.events import event_indicator
from eventjax.primitive import defjvp_by_name, general_batching_rule, split_params
from eventjax.primitive.tags import operator_tags

__all__ = ['register_rules']


def register_rules(prim, op) -> None:
    """Give ``prim`` (an ``XLACustomKernel``) the JVP, transpose and batching rules of ``op``.

    ``op`` is the operator's :class:`~eventjax.kernels.common.operator.Operator`
    declaration, which calls this once; it supplies ``operands``, ``events``,
    ``matrix``, ``bind``, ``float_call``, ``mm_call`` and ``weight_cotangent``.
    """
    prim.def_tags(*operator_tags(prim.name))
    weights, x = op.operands[0], op.operands[-1]
    defjvp_by_name(prim, op.operands, **{
        weights: lambda dw, w, *rest, **params: _jvp_weights(op, dw, w, *rest, **params),
        x: lambda dx, w, *rest, **params: _jvp_x(op, dx, w, *rest, **params),
    })
    prim.def_transpose_rule(lambda cts, *args, **params: _transpose(op, cts, *args, **params))
    prim.def_batching_rule(lambda args, axes, **params: _batch(prim, op, args, axes, **params))


def _jvp_weights(op, dw, w, *rest, **params):
    backend, static = split_params(params)
    return [op.bind(dw, *rest, backend=backend, **static)]


def _jvp_x(op, dx, w, *rest, **params):
    backend, static = split_params(params)
    # The tangent of events may be wider or narrower than the weights; the
    # cast is an ordinary (transposable) JAX op, so grads come back in x's dtype.
    return [op.float_call(w, *rest[:-1], dx.astype(w.dtype), backend=backend, **static)]


def _transpose(op, cts, *args, **params):
    (ct,) = cts
    w, structure, x = args[0], args[1:-1], args[-1]
    result = [None] * len(args)
    if type(ct) is ad.Zero:
        return result
    backend, static = split_params(params)
    if ad.is_undefined_primal(w) and ad.is_undefined_primal(x):
        raise ValueError(f'{op.operands}: the product is not linear in {op.operands[0]} and '
                         f'{op.operands[-1]} together; differentiate with respect to one at a time.')
    if ad.is_undefined_primal(x):
        if op.events:
            raise ValueError(f'{op.operands[-1]}: a binary operator is not linear in its events; '
                             f'its derivative goes through the float operator.')
        flipped = {**static, 'transpose': not static['transpose']}
        ct_x = op.float_call(w, *structure, ct, backend=backend, **flipped)
        result[-1] = ct_x.astype(x.aval.dtype)
    if ad.is_undefined_primal(w):
        x_float = event_indicator(x, ct.dtype) if op.events else x.astype(ct.dtype)
        ct_w = op.weight_cotangent(ct, x_float, *structure, **static)
        if ct_w.shape != w.aval.shape:
            ct_w = ct_w.sum().reshape(w.aval.shape)
        result[0] = ct_w.astype(w.aval.dtype)
    return result


def _batch(prim, op, args, axes, **params):
    """vmap over ``x`` alone folds into one matrix call; anything else scans."""
    if axes[-1] is None or any(a is not None for a in axes[:-1]):
        return general_batching_rule(prim, args, axes, **params)
    backend, static = split_params(params)
    x = jnp.moveaxis(args[-1], axes[-1], 0)
    batch = x.shape[0]
    if not op.matrix:
        y = op.mm_call(*args[:-1], x.T, backend=backend, **static)
        return [y], [1]
    # (b, rows, k) -> (rows, b * k): each batch element becomes k more columns.
    rows, k = x.shape[1], x.shape[2]
    folded = jnp.transpose(x, (1, 0, 2)).reshape(rows, batch * k)
    y = op.mm_call(*args[:-1], folded, backend=backend, **static)
    return [y.reshape(y.shape[0], batch, k)], [1]
