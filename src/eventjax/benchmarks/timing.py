"""Median wall time of a jitted call, compilation excluded."""

from __future__ import annotations

import statistics
import time

import jax

__all__ = ['median_us']


def median_us(fn, args, *, min_calls: int = 5, max_calls: int = 200, budget_s: float = 0.3) -> float:
    """Call ``fn(*args)`` once to compile, then time calls until ``budget_s`` or ``max_calls``.

    Returns the median of at least ``min_calls`` calls, in microseconds.

    Example:
        >>> import jax.numpy as jnp
        >>> median_us(jax.jit(lambda x: x + 1), (jnp.ones(3),), min_calls=2, max_calls=2) > 0
        True
    """
    jax.block_until_ready(fn(*args))
    times = []
    start = time.perf_counter()
    while len(times) < min_calls or (len(times) < max_calls and time.perf_counter() - start < budget_s):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6
