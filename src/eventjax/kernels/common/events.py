"""Event and weight conventions shared by every family.

An event is ``True`` in a bool array, or an entry ``> 0`` in a numeric one;
the value itself is ignored. Weights are homogeneous (shape ``(1,)``, one
weight for every stored connection) or one per stored connection.
"""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

__all__ = ['accumulation_dtype', 'event_indicator', 'is_homogeneous', 'product_kernels', 'stored_terms']


def event_indicator(events, dtype):
    """1 where ``events`` holds an event, else 0, in ``dtype``.

    Example:
        >>> event_indicator(jnp.array([0.5, -1.0, 0.0, 2.0]), jnp.float32)
        Array([1., 0., 0., 1.], dtype=float32)
    """
    events = jnp.asarray(events)
    mask = events if events.dtype == jnp.bool_ else events > 0
    return mask.astype(dtype)


def is_homogeneous(weights, n_stored: int) -> bool:
    """Whether ``weights`` is one weight shared by all ``n_stored`` connections.

    A length-1 weight vector with exactly one stored connection counts as
    per-entry; both readings give the same product.
    """
    return jnp.shape(weights) == (1,) and n_stored != 1


def accumulation_dtype(dtype) -> np.dtype:
    """The dtype sums run in: float16 accumulates in float32."""
    dtype = np.dtype(dtype)
    return np.dtype(np.float32) if dtype == np.float16 else dtype


def stored_terms(w, xs, kept, *, binary: bool, acc):
    """Each stored entry's term in ``acc``: ``w`` where ``xs`` is an event (binary) or ``w * xs``; 0 where not ``kept``.

    A binary term selects, never multiplies by the 0/1 indicator: ``NaN * 0``
    would be NaN where a NaN weight has no event.

    Example:
        >>> import jax.numpy as jnp
        >>> stored_terms(jnp.array([jnp.nan, 2.]), jnp.array([False, True]), jnp.array([True, True]),
        ...              binary=True, acc=jnp.float32)
        Array([0., 2.], dtype=float32)
    """
    zero = jnp.zeros((), acc)
    if binary:
        event = xs if xs.dtype == jnp.bool_ else xs > 0
        return jnp.where(kept & event, w, zero)
    return jnp.where(kept, w * xs.astype(acc), zero)


def product_kernels(product):
    """The ``jax`` kernel generators ``(float, binary)`` of a family's ``product``.

    ``product(*operands, **static, out_dtype=..., binary=...)`` computes one
    product; each generator takes the primitive's static parameters and
    ``outs`` and returns the kernel of the operands.

    Example:
        >>> import jax
        >>> def scaled(x, *, scale, out_dtype, binary):
        ...     return (x > 0 if binary else x * scale).astype(out_dtype)
        >>> f, b = product_kernels(scaled)
        >>> b(scale=2, outs=(jax.ShapeDtypeStruct((2,), jnp.float32),))(jnp.array([-1.0, 3.0]))
        (Array([0., 1.], dtype=float32),)
    """
    def generator(binary):
        def kernel_generator(*, outs, **static):
            return lambda *operands: (product(*operands, **static, out_dtype=outs[0].dtype, binary=binary),)
        return kernel_generator
    return generator(False), generator(True)

