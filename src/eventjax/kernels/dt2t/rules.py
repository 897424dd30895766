"""The rules of the family's two primitives, both bilinear.

``csr_dt2t`` (operands ``w, indices, indptr, y``): the JVP is the product
on each tangent; the transpose in ``w`` is the product with ``ct`` in place
of ``w``, in ``y`` the cotangents ``ct * w`` summed into the positions ``y``
was read at; a vmap over ``w`` and ``y`` folds into the batch axis (one
call), a vmap over the structure runs one call per element.
``csr_sddmm`` (operands ``a, bt, indices, indptr``; ``bt`` is ``b`` transposed): the JVP is the product
on each tangent; the transposes scatter ``ct`` times the other factor.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax.interpreters import ad

from eventjax.kernels.dt2t import reference
from eventjax.primitive import defjvp_by_name, general_batching_rule, split_params

__all__ = ['DT2T_OPERANDS', 'SDDMM_OPERANDS', 'register_dt2t_rules', 'register_sddmm_rules']

DT2T_OPERANDS = ('w', 'indices', 'indptr', 'y')
SDDMM_OPERANDS = ('a', 'bt', 'indices', 'indptr')


def _undefined(x) -> bool:
    return ad.is_undefined_primal(x)


def _bilinear_transpose(left: int, right: int, left_ct, right_ct):
    """The transpose rule of a primitive bilinear in operands ``left`` and ``right``.

    ``left_ct(ct, *operands, backend=, **static)`` is the cotangent of the
    ``left`` operand (``right_ct`` of the ``right`` one), cast to its dtype here.
    """
    def transpose(cts, *operands, **params):
        (ct,) = cts
        result = [None] * len(operands)
        if type(ct) is ad.Zero:
            return result
        backend, static = split_params(params)
        a, b = operands[left], operands[right]
        if _undefined(a) and not _undefined(b):
            result[left] = left_ct(ct, *operands, backend=backend, **static).astype(a.aval.dtype)
        elif _undefined(b) and not _undefined(a):
            result[right] = right_ct(ct, *operands, backend=backend, **static).astype(b.aval.dtype)
        return result
    return transpose


def _linear_in(bind, slot: int, cast: bool = False):
    """The JVP rule in operand ``slot`` of a bilinear primitive: the primitive itself, the tangent in that slot.

    With ``cast`` the tangent takes operand 0's dtype (``y`` of ``csr_dt2t``
    may be an event vector, while the product is in ``w``'s dtype).
    """
    def jvp(tangent, *operands, **params):
        backend, static = split_params(params)
        args = list(operands)
        args[slot] = tangent.astype(operands[0].dtype) if cast else tangent
        return [bind(*args, backend=backend, **static)]
    return jvp


def register_dt2t_rules(prim, bind) -> None:
    """Wire ``csr_dt2t``'s JVP, transpose and batching; ``bind(w, indices, indptr, y, backend=, **static)``."""
    transpose = _bilinear_transpose(
        0, 3, lambda ct, w, indices, indptr, y, backend, **static: bind(
            ct.astype(w.aval.dtype), indices, indptr, y, backend=backend, **static),
        lambda ct, w, indices, indptr, y, backend, shape, transpose, **_: reference.y_cotangent(
            ct, w, indices, indptr, shape=shape, transpose=transpose))

    def batch(args, axes, **params):
        w, indices, indptr, y = args
        aw, ai, ap, ay = axes
        if ai is not None or ap is not None:
            return general_batching_rule(prim, args, axes, **params)
        size = w.shape[aw] if aw is not None else y.shape[ay]
        w = jnp.moveaxis(w, aw, 0) if aw is not None else jnp.broadcast_to(w, (size, *w.shape))
        y = jnp.moveaxis(y, ay, 0) if ay is not None else jnp.broadcast_to(y, (size, *y.shape))
        backend, static = split_params(params)
        rows = size * w.shape[1]
        out = bind(w.reshape(rows, w.shape[2]), indices, indptr, y.reshape(rows, y.shape[2]),
                   backend=backend, **static)
        return [out.reshape(w.shape)], [0]

    defjvp_by_name(prim, DT2T_OPERANDS, w=_linear_in(bind, 0), y=_linear_in(bind, 3, cast=True))
    prim.def_transpose_rule(transpose)
    prim.def_batching_rule(batch)


def register_sddmm_rules(prim, bind) -> None:
    """Wire ``csr_sddmm``'s JVP, transpose and batching; ``bind(a, bt, indices, indptr, backend=, **static)``."""
    transpose = _bilinear_transpose(
        0, 1, lambda ct, a, b, indices, indptr, backend, shape, **_: reference.sddmm_cotangent(
            ct, b, indices, indptr, shape=shape, side='a'),
        lambda ct, a, b, indices, indptr, backend, shape, **_: reference.sddmm_cotangent(
            ct, a, indices, indptr, shape=shape, side='b'))

    defjvp_by_name(prim, SDDMM_OPERANDS, a=_linear_in(bind, 0), bt=_linear_in(bind, 1))
    prim.def_transpose_rule(transpose)
    prim.def_batching_rule(lambda args, axes, **params: general_batching_rule(prim, args, axes, **params))
