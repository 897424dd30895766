"""JVP helpers for primitives with one result or several.

JAX's own ``ad.defjvp`` assumes one result. :func:`defjvp` takes one rule per
operand, each returning the tangent of every result, and sums them; a
single-result primitive (``multiple_results=False``) works too.
:func:`defjvp_by_name` does the same with rules keyed by operand name, so a
rule cannot silently attach to the wrong operand when operands move.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from jax.interpreters import ad

from eventjax.errors import JVPRuleCountError
from eventjax.primitive.compat import zero_tangent_like

__all__ = ['defjvp', 'defjvp_by_name']


def defjvp(prim, *rules: Callable | None) -> None:
    """Define the JVP of a multiple-result primitive with one rule per operand.

    ``rule(tangent, *primals, **params)`` returns the tangent of each result
    (a sequence, or one array when the primitive has one result; None or a
    symbolic zero for a result it does not touch). As in JAX's ``ad.defjvp``,
    a None rule means the operand contributes no tangent. Zero tangents are
    skipped. Works for multiple-result primitives (every
    ``XLACustomKernel``) and for plain single-result JAX primitives.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> import eventjax as ej
        >>> p = ej.XLACustomKernel('defjvp_example')
        >>> p.def_jax_kernel(lambda outs: lambda x: (x * 3.0,))
        >>> ej.defjvp(p, lambda t, x, **kw: [t * 3.0])
        >>> s = jax.ShapeDtypeStruct((2,), jnp.float32)
        >>> jax.jvp(lambda x: p(x, outs=s), (jnp.ones(2),), (jnp.ones(2),))[1]
        Array([3., 3.], dtype=float32)
    """
    prim = getattr(prim, 'primitive', prim)
    ad.primitive_jvps[prim] = functools.partial(_jvp, prim, tuple(rules))


def defjvp_by_name(prim, operand_names: Sequence[str], **rules: Callable) -> None:
    """Like :func:`defjvp`, with rules keyed by operand name.

    Example:
        >>> import eventjax as ej
        >>> from eventjax.primitive.autodiff import defjvp_by_name
        >>> p = ej.XLACustomKernel('defjvp_by_name_example')
        >>> defjvp_by_name(p, ('x', 'y'), y=lambda t, x, y, **kw: [t])
    """
    unknown = set(rules) - set(operand_names)
    if unknown:
        raise ValueError(f'defjvp_by_name(): rules for unknown operands {sorted(unknown)}; '
                         f'the operands are {list(operand_names)}.')
    defjvp(prim, *(rules.get(name) for name in operand_names))


def _jvp(prim, rules, primals, tangents, **params):
    if len(rules) != len(primals):
        raise JVPRuleCountError(f'{prim.name}: {len(rules)} JVP rules for {len(primals)} operands; '
                        f'give one rule (or None) per operand.')
    single = not prim.multiple_results
    outs = prim.bind(*primals, **params)
    results = [outs] if single else list(outs)
    total = [None] * len(results)
    for rule, tangent in zip(rules, tangents):
        if rule is None or type(tangent) is ad.Zero:
            continue  # no tangent contribution from this operand
        for i, t in enumerate(_per_result(prim, rule(tangent, *primals, **params), len(results))):
            if t is None or type(t) is ad.Zero:
                continue
            total[i] = t if total[i] is None else ad.add_tangents(total[i], t)
    total = [zero_tangent_like(o) if t is None else t for o, t in zip(results, total)]
    return (outs, total[0]) if single else (outs, total)


def _per_result(prim, contrib, n_results: int) -> list:
    """A rule's return value as one tangent per result, or a TypeError saying what is wrong."""
    if isinstance(contrib, (list, tuple)):
        if len(contrib) != n_results:
            raise TypeError(f'{prim.name}: a JVP rule returned {len(contrib)} tangents, but the primitive '
                            f'has {n_results} result(s); return one tangent (or None) per result.')
        return list(contrib)
    if n_results != 1:
        raise TypeError(f'{prim.name}: a JVP rule returned one {type(contrib).__name__}, but the primitive '
                        f'has {n_results} results; return a list with one tangent (or None) per result.')
    return [contrib]
