"""Argument checks shared by every kernel family.

Each check runs at trace time on shapes and dtypes only and raises a
``TypeError`` (wrong kind of value or dtype) or ``ValueError`` (wrong shape or
rank) whose message names the function, the argument, what was expected and
what came, e.g. ``csrmv(): indptr must have length 11 (rows + 1), got 10.``
"""

from __future__ import annotations

import operator

import jax.numpy as jnp
import numpy as np

__all__ = [
    'check_events',
    'check_float_operand',
    'check_index_array',
    'check_length',
    'check_rank',
    'check_shape',
    'check_weights',
    'dtype_of',
]

WEIGHT_DTYPES = ('float16', 'float32', 'float64')


def dtype_of(x) -> np.dtype:
    """The dtype of an array or Python scalar, as JAX will see it."""
    return np.dtype(jnp.result_type(x))


def check_shape(who: str, shape) -> tuple[int, int]:
    """``shape`` as a pair of non-negative Python ints.

    Example:
        >>> check_shape('csrmv()', (3, 4))
        (3, 4)
    """
    try:
        pair = tuple(operator.index(d) for d in shape)
    except TypeError:
        pair = None
    if pair is None or len(pair) != 2 or min(pair) < 0:
        raise ValueError(f'{who}: shape must be a pair of non-negative ints (rows, cols), got {shape!r}.')
    return pair


def check_rank(who: str, name: str, x, ranks: tuple[int, ...]) -> None:
    """``x`` has one of ``ranks``."""
    if jnp.ndim(x) not in ranks:
        want = ' or '.join(str(r) for r in ranks)
        raise ValueError(f'{who}: {name} must have rank {want}, got rank {jnp.ndim(x)} '
                         f'(shape {jnp.shape(x)}).')


def check_length(who: str, name: str, x, length: int, what: str, axis: int = 0) -> None:
    """``x.shape[axis] == length``; ``what`` says where the length comes from."""
    got = jnp.shape(x)[axis]
    if got == length:
        return
    if jnp.ndim(x) == 1:
        raise ValueError(f'{who}: {name} must have length {length} ({what}), got {got}.')
    raise ValueError(f'{who}: {name} must have shape[{axis}] == {length} ({what}), '
                     f'got shape {jnp.shape(x)}.')


def check_weights(who: str, name: str, x):
    """Float weights as an array; a scalar becomes shape ``(1,)`` (homogeneous).

    Example:
        >>> check_weights('csrmv()', 'data', 0.5).shape
        (1,)
    """
    dtype = dtype_of(x)
    if dtype.name not in WEIGHT_DTYPES:
        raise TypeError(f'{who}: {name} must be a float16, float32 or float64 array, got {dtype.name}; '
                        f'cast it, e.g. {name}.astype(jnp.float32).')
    x = jnp.asarray(x, dtype)
    return x.reshape(1) if x.ndim == 0 else x


def check_index_array(who: str, name: str, x, rank: int = 1):
    """An int32 or int64 array of the given rank."""
    dtype = dtype_of(x)
    if dtype.name not in ('int32', 'int64'):
        raise TypeError(f'{who}: {name} must be an int32 or int64 array, got {dtype.name}; '
                        f'cast it, e.g. {name}.astype(jnp.int32).')
    check_rank(who, name, x, (rank,))
    return jnp.asarray(x)


def check_events(who: str, name: str, x):
    """Events: a bool array or a numeric one (entries > 0 are events)."""
    dtype = dtype_of(x)
    if not (dtype == np.bool_ or jnp.issubdtype(dtype, jnp.floating) or jnp.issubdtype(dtype, jnp.integer)):
        raise TypeError(f'{who}: {name} must be a bool, integer or float array of events, got {dtype.name}.')
    return jnp.asarray(x)


def check_float_operand(who: str, name: str, x, dtype: np.dtype):
    """A numeric operand of a float product, cast to the weights' ``dtype``.

    The cast happens outside the primitive, so autodiff returns tangents in
    the operand's own dtype.
    """
    got = dtype_of(x)
    if not (jnp.issubdtype(got, jnp.floating) or jnp.issubdtype(got, jnp.integer) or got == np.bool_):
        raise TypeError(f'{who}: {name} must be a real numeric array, got {got.name}.')
    return jnp.asarray(x).astype(dtype)
