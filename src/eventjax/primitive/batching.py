"""The general batching rule: vmap any primitive with a ``lax.scan`` over the batch.

The scan runs inside one ``jax.jit`` whose static key is the primitive, the
batch axes and the parameters. An eager ``vmap`` calls the rule on every call;
built afresh each time, the scan body would be a new function, which JAX
traces and compiles again (and keeps, up to its cache limit): the jitted
scan is traced once per key and shape and then reused.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import jax
import jax.numpy as jnp

__all__ = ['general_batching_rule']


def general_batching_rule(prim, args: Sequence[Any], axes: Sequence[int | None], **kwargs) -> tuple[Any, Any]:
    """General-purpose batching rule for custom JAX primitives.

    Moves every batch dimension to axis 0 and applies the primitive to each
    batch element with ``jax.lax.scan`` (the carry is unused, always 0).
    Unbatched operands are closed over. When no operand is batched it binds
    the primitive once on the original arguments and reports every output as
    unbatched (None), since an empty scan would fail. The scan is compiled
    once per primitive, parameters, batch axes and shapes: an eager
    ``jax.vmap`` called again reuses it (parameters that cannot be hashed
    scan without that reuse).

    Given an :class:`~eventjax.XLACustomKernel` and call-style keywords
    (``outs=`` any pytree of structs, ``backend=``, static parameters) it
    calls the kernel as a user would; given the bind parameters a rule
    receives, it binds the underlying primitive with them.

    Args:
        prim: the primitive, or an :class:`~eventjax.XLACustomKernel`.
        args: the operands.
        axes: the batch axis of each operand, or None for an unbatched one.
        **kwargs: the primitive's parameters, forwarded to ``bind``.

    Returns:
        ``(outs, out_dims)``: ``out_dims`` has the structure of ``outs``, every
        leaf 0 (or None when nothing was batched).

    Example:
        >>> import functools
        >>> from jax.interpreters import batching
        >>> import eventjax as ej
        >>> p = ej.XLACustomKernel('general_batching_example')
        >>> batching.primitive_batchers[p.primitive] = functools.partial(
        ...     ej.general_batching_rule, p.primitive)
    """
    if hasattr(prim, 'primitive') and 'kernels' not in kwargs:
        apply = prim  # call-style keywords: resolve and structure outs like a call
    else:
        prim = getattr(prim, 'primitive', prim)
        apply = prim.bind
    if len(args) != len(axes):
        raise ValueError(f'general_batching_rule(): got {len(args)} args but {len(axes)} axes.')
    if all(axis is None for axis in axes):
        outs = apply(*args, **kwargs)
        return outs, jax.tree.map(lambda _: None, outs)

    key = (apply, tuple(axes), tuple(sorted(kwargs.items())))
    try:
        hash(key)
    except TypeError:  # a parameter JAX could not key on either: scan without reuse
        outs = _batch_scan(key, *args)
    else:
        outs = _cached_batch_scan(key, *args)
    return outs, jax.tree.map(lambda _: 0, outs)


def _batch_scan(key: tuple, *args: Any) -> Any:
    """Apply ``key = (apply, axes, sorted parameter items)`` to each batch element of ``args``."""
    apply, axes, items = key
    kwargs = dict(items)
    batched = [i for i, axis in enumerate(axes) if axis is not None]
    xs = [jnp.moveaxis(args[i], axes[i], 0) for i in batched]

    def body(carry, sliced):
        full = list(args)
        for i, x in zip(batched, sliced):
            full[i] = x
        return carry, apply(*full, **kwargs)

    _, outs = jax.lax.scan(body, 0, xs)
    return outs


_cached_batch_scan = jax.jit(_batch_scan, static_argnums=0)
