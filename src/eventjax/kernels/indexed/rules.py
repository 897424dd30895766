"""The rules of the family's primitives: linear in ``data`` (the first operand), integer everywhere else.

Both operators read the weights through structure and an index list, so
the JVP is the operator on the tangent, the transpose is a weight cotangent
(``cotangent(ct, n_weights, *rest, **static)``), and a vmap runs one call
per element (``general_batching_rule``).
"""

from __future__ import annotations

from jax.interpreters import ad

from eventjax.primitive import defjvp_by_name, general_batching_rule, split_params

__all__ = ['linear_in_data']


def linear_in_data(cotangent):
    """The ``rules`` hook of a :class:`~eventjax.kernels.common.operator.Declaration` linear in its first operand.

    ``cotangent(ct, n_weights, *rest, **static)`` is the first operand's
    cotangent; the hook wires the JVP, transpose and batching rules.
    """
    return lambda declaration: _register(declaration.primitive, declaration.operands, declaration.bind, cotangent)


def _register(prim, operands, bind, cotangent) -> None:
    def jvp(dw, data, *rest, **params):
        backend, static = split_params(params)
        return [bind(dw, *rest, backend=backend, **static)]

    def transpose(cts, data, *rest, **params):
        (ct,) = cts
        result = [None] * len(operands)
        if type(ct) is ad.Zero or not ad.is_undefined_primal(data):
            return result
        _, static = split_params(params)
        result[0] = cotangent(ct, data.aval.shape[0], *rest, **static).astype(data.aval.dtype)
        return result

    defjvp_by_name(prim, operands, **{operands[0]: jvp})
    prim.def_transpose_rule(transpose)
    prim.def_batching_rule(lambda args, axes, **params: general_batching_rule(prim, args, axes, **params))
