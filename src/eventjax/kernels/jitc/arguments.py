"""Argument checks shared by the JITC operators (trace time, plus concrete values when given)."""

from __future__ import annotations

import operator

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.kernels.common import check_events, check_shape, check_weights, dtype_of
from eventjax.kernels.common.checks import check_transpose, check_x_layout, operand_name
from eventjax.kernels.common.units import attach, product_unit, same_unit_pair, split
from eventjax.kernels.jitc import generator as gen

__all__ = ['check_jitc_call', 'check_law', 'check_params', 'check_prob', 'check_seed', 'checked_call',
           'concrete_or_none', 'expected_nnz', 'make_stream']

INDEX_LIMIT = 2**31


def check_law(who: str, law) -> str:
    """``law`` is one of ``'homo'``, ``'uniform'``, ``'normal'``."""
    if law not in gen.LAWS:
        raise ValueError(f"{who}: law must be 'homo', 'uniform' or 'normal', got {law!r}.")
    return law


def check_prob(who: str, prob) -> float:
    """A Python float in ``[0, 1]`` (it fixes the structure, so it is static)."""
    if isinstance(prob, jax.core.Tracer):
        raise TypeError(f'{who}: prob must be a concrete Python float (it fixes the matrix structure), '
                        f'got a traced value; pass it as a static argument.')
    try:
        p = float(prob)
    except (TypeError, ValueError):
        raise TypeError(f'{who}: prob must be a float in [0, 1], got {prob!r}.') from None
    if not (0.0 <= p <= 1.0):  # also rejects NaN
        raise ValueError(f'{who}: prob must be in [0, 1], got {prob!r}.')
    return p


def check_seed(who: str, seed):
    """An integer scalar seed (Python int or integer array, traced or not) as uint32."""
    if isinstance(seed, (bool, np.bool_)):
        raise TypeError(f'{who}: seed must be an integer, got {seed!r}.')
    if isinstance(seed, int):
        return jnp.asarray(seed % 2**32, jnp.uint32)
    dtype = dtype_of(seed)
    if not jnp.issubdtype(dtype, jnp.integer):
        raise TypeError(f'{who}: seed must be an integer scalar (int32/uint32/int64), got dtype {dtype.name}; '
                        f'pass e.g. seed=42 or jnp.int32(42).')
    if jnp.ndim(seed) != 0:
        raise ValueError(f'{who}: seed must be a scalar, got shape {jnp.shape(seed)}; '
                         f'vmap over an array of seeds instead.')
    return jnp.asarray(seed).astype(jnp.uint32)


def concrete_or_none(x):
    """``x`` as a NumPy array, or None when it is traced."""
    try:
        return np.asarray(x)
    except (jax.errors.TracerArrayConversionError, jax.errors.ConcretizationTypeError):
        return None


def check_params(who: str, law: str, params):
    """The law's parameters as one float vector: ``(w,)``, ``(low, high)`` or ``(loc, scale)``.

    Concrete values are checked (``low <= high``, ``scale >= 0``); traced
    ones are not.
    """
    want = gen.LAWS[law]
    names = {'homo': 'weight', 'uniform': '(low, high)', 'normal': '(loc, scale)'}[law]
    if law != 'homo':
        if not isinstance(params, (tuple, list)) or len(params) != 2:
            raise ValueError(f"{who}: law={law!r} takes params={names}, a pair, got {params!r}.")
        dtype = jnp.result_type(*params)
        params = jnp.stack([jnp.asarray(p, dtype).reshape(()) for p in params])
    params = check_weights(who, names, params)
    if params.shape != (want,):
        raise ValueError(f'{who}: law={law!r} takes params={names}, {want} value(s), got shape {params.shape}.')
    values = concrete_or_none(params)
    if values is not None and law == 'uniform' and values[0] > values[1]:
        raise ValueError(f'{who}: uniform weights need low <= high, got low={values[0]}, high={values[1]}.')
    if values is not None and law == 'normal' and values[1] < 0:
        raise ValueError(f'{who}: normal weights need scale >= 0, got scale={values[1]}.')
    return params


def make_stream(seed, span: int, law: str):
    """The uint32 ``(seed, span, law code)`` operand every JITC kernel reads.

    The law travels in the operand too, so a numba kernel serves every law
    (one compiled target per dtype, not per law).
    """
    return jnp.stack([seed, jnp.asarray(span, jnp.uint32), jnp.asarray(gen.LAW_CODES[law], jnp.uint32)])


def check_jitc_call(who, params, x, *, seed, prob, shape, law, transpose, matrix, events):
    """Validate a JITC product; returns ``(params, stream, x, shape)``.

    A float ``x`` and the params are cast to their common JAX dtype; events
    keep their dtype and the result takes the params' dtype.
    """
    m, n = (operator.index(d) for d in check_shape(who, shape))
    check_transpose(who, transpose)
    law = check_law(who, law)
    span = gen.span_of(check_prob(who, prob))
    if max(m, n + span) >= INDEX_LIMIT:
        raise ValueError(f'{who}: shape {(m, n)} with prob={prob} overflows the int32 column index '
                         f'(rows and columns + {span} must stay below 2**31); use fewer rows/columns '
                         f'or a larger prob.')
    params = check_params(who, law, params)
    stream = make_stream(check_seed(who, seed), span, law)
    name = operand_name(matrix, events)
    if events:
        x = check_events(who, name, x)
    else:
        got = dtype_of(x)
        if not (jnp.issubdtype(got, jnp.number) or got == np.bool_) or jnp.issubdtype(got, jnp.complexfloating):
            raise TypeError(f'{who}: {name} must be a real numeric array, got {got.name}.')
        dtype = jnp.result_type(params, x)
        params, x = params.astype(dtype), jnp.asarray(x).astype(dtype)
    check_x_layout(who, name, x, shape=(m, n), transpose=transpose, matrix=matrix)
    return params, stream, x, (m, n)


def expected_nnz(shape, prob: float) -> float:
    """The expected number of connections: ``m * n * 2 / (span + 1)`` (about ``m * n * prob``)."""
    span = gen.span_of(prob)
    return 0.0 if span == 0 else shape[0] * shape[1] * 2.0 / (span + 1)


def checked_call(op, weights, x, *, seed, prob, shape, law, transpose, backend):
    """Check a JITC product's operands for the declared operator ``op``, then bind it."""
    weights, unit_w = same_unit_pair(weights) if isinstance(weights, (tuple, list)) else split(weights)
    x, unit_x = split(x)
    weights, stream, x, shape = check_jitc_call(
        f'{op.name}()', weights, x, seed=seed, prob=prob, shape=shape, law=law, transpose=transpose,
        matrix=op.matrix, events=op.events)
    out = op.bind(weights, stream, x, shape=shape, transpose=transpose, law=law, backend=backend)
    return attach(out, product_unit(unit_w, unit_x))
