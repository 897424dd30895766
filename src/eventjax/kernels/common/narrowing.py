"""The one narrowing rule for index-like arguments (delays, steps, counts, ids, rows).

Kernels read these as int32. Narrowing first and checking after would let a
wide value wrap onto a valid one (``2**32 + 2`` becomes ``2``), so each
helper here looks at the value in its own width -- a Python int, a NumPy
scalar or array (int64 even while ``jax_enable_x64`` is off, where
``jnp.asarray`` alone would wrap it), a JAX array or a tracer -- decides
there, and narrows only values that fit.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.kernels.common.eager import one_program_when_eager

__all__ = ['host_integers', 'narrow_clipped', 'narrow_in_range', 'narrow_step']


def host_integers(x):
    """``x`` as an exact NumPy integer array if it is a Python int or NumPy value, else None (a JAX value).

    Example:
        >>> host_integers(np.int64(2**32 + 2)).dtype
        dtype('int64')
    """
    if isinstance(x, (jax.Array, jax.core.Tracer)):
        return None
    if isinstance(x, int) and not isinstance(x, bool):
        return np.asarray(x, object) if not -2**63 <= x < 2**63 else np.asarray(x, np.int64)
    if isinstance(x, (bool, np.bool_, np.integer, np.ndarray)):
        return np.asarray(x)
    return None


def _fits_int32(dtype) -> bool:
    dtype = np.dtype(dtype)
    return dtype.kind in 'iu' and np.can_cast(dtype, np.int32, casting='safe')


def _select(x, low: int, high: int, below, above):
    """int32 ``x`` where ``low <= x < high``; elsewhere ``below`` / ``above`` (arrays of the same kind)."""
    host = host_integers(x)
    if host is not None:
        if host.dtype.kind not in 'iuO':
            return None
        wide = host if _fits_int32(host.dtype) else host.astype(object)  # exact, whatever the width
        inside = np.where(wide < low, below, np.where(wide >= high, above, wide))
        return jnp.asarray(np.asarray(inside, np.int64).astype(np.int32))
    x = jnp.asarray(x)
    if not jnp.issubdtype(x.dtype, jnp.integer):
        return None
    return _select_array(x, low, high, below, above)


@one_program_when_eager(1, 2, 3, 4)
def _select_array(x, low: int, high: int, below, above):
    if _fits_int32(x.dtype):
        x = x.astype(jnp.int32)
        return jnp.where(x < low, jnp.int32(below), jnp.where(x >= high, jnp.int32(above), x))
    # Compared in the value's own width (int64, uint32, uint64): the bounds fit it, the value may not fit int32.
    unsigned = jnp.issubdtype(x.dtype, jnp.unsignedinteger)
    is_low = jnp.zeros(x.shape, bool) if unsigned and low <= 0 else x < max(low, 0) if unsigned else x < low
    is_high = x >= high
    narrow = x.astype(jnp.int32)
    return jnp.where(is_low, jnp.int32(below), jnp.where(is_high, jnp.int32(above), narrow))


def narrow_in_range(x, low: int, high: int, fill: int):
    """``x`` as int32, with every value outside ``[low, high)`` replaced by ``fill`` (decided before narrowing).

    Returns None when ``x`` is not an integer value (the caller raises its own ``TypeError``).

    Example:
        >>> narrow_in_range(np.array([2, 2**32 + 2], np.int64), 1, 8, 0)
        Array([2, 0], dtype=int32)
    """
    return _select(x, low, high, fill, fill)


def narrow_clipped(x, low: int, high: int):
    """``x`` as int32, clipped to ``[low, high]`` before narrowing (a count past ``high`` stays past it).

    Example:
        >>> narrow_clipped(np.int64(2**32 + 1), 0, 5)
        Array(5, dtype=int32)
    """
    return _select(x, low, high + 1, low, high)


def narrow_step(t, length: int):
    """The step ``t`` as int32 ``t mod length`` (floor modulo) when it is wider than int32, else as int32.

    The slot a step lands in is kept whatever the width: ``np.int64(2**32 + 3)``
    with a ring of 8 steps is step 3 (mod 8), not the wrapped ``3 - 2**32``.
    Returns None when ``t`` is not an integer value.

    Example:
        >>> narrow_step(np.int64(2**32 + 3), 8)
        Array(3, dtype=int32)
    """
    length = max(int(length), 1)
    host = host_integers(t)
    if host is not None:
        if host.dtype.kind not in 'iuO':
            return None
        if _fits_int32(host.dtype):
            return jnp.asarray(host.astype(np.int32))
        return jnp.asarray(np.asarray(np.mod(host.astype(object), length), np.int64).astype(np.int32))
    t = jnp.asarray(t)
    if not jnp.issubdtype(t.dtype, jnp.integer):
        return None
    if _fits_int32(t.dtype):
        return t.astype(jnp.int32)
    return jnp.mod(t, length).astype(jnp.int32)
