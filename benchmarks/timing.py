"""Median wall time of a jitted call, compilation excluded."""

from __future__ import annotations

import statistics
import time

import jax

__all__ = ['interleaved_us', 'median_us']


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


def interleaved_us(fns, *, min_calls: int = 5, max_calls: int = 200, budget_s: float = 0.3,
                   block: int = 5, settle_s: float = 0.01) -> list[float]:
    """Median times of several no-argument calls, timed in alternating blocks.

    Each round gives every function a block: untimed calls for ``settle_s``
    (at least one: they bring that function's data back into the caches, and
    let the threads and memory traffic of the function before it die down;
    after a dense product the next few short calls measured up to 10x
    slower, and a two-thread numba kernel stayed 1.5-2x slower for more than
    2 ms but not 5-10), then ``block`` timed calls. Alternating puts every function under the same
    load, so their ratios hold on a shared machine even when the absolute
    times drift, while each is still timed as a loop calling it repeatedly
    would see it (strict one-call interleaving would time whoever follows a
    large dense product with cold caches, and whoever follows eventjax on the
    same arrays with warm ones). Rounds go on until ``budget_s`` per function
    is spent or ``max_calls`` timed calls are taken, and at least
    ``min_calls`` are.

    Example:
        >>> a, b = interleaved_us([lambda: sum(range(10)), lambda: sum(range(10_000))], min_calls=3, max_calls=3)
        >>> a < b
        True
    """
    fns = list(fns)
    if not fns:
        return []
    times = [[] for _ in fns]
    budget = budget_s * len(fns)
    start = time.perf_counter()
    while len(times[0]) < min_calls or (len(times[0]) < max_calls and time.perf_counter() - start < budget):
        for fn, ts in zip(fns, times):
            settled = time.perf_counter() + settle_s
            jax.block_until_ready(fn())
            while time.perf_counter() < settled:
                jax.block_until_ready(fn())
            for _ in range(max(1, min(block, max_calls - len(ts)))):
                t0 = time.perf_counter()
                jax.block_until_ready(fn())
                ts.append(time.perf_counter() - t0)
    return [statistics.median(ts) * 1e6 for ts in times]
