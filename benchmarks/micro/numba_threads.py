"""Speed-up of the parallel numba kernels: 1 thread against all of them, at n = 100,000.

Run: ``python -m benchmarks.micro numba_threads``. The network is the one of ``eventjax
bench`` (100 connections per row, 2% events, float32). Above
``numba_events.PARALLEL_MIN_WORK`` visited entries the gathers (``transpose=False``)
run their rows on numba's threads; ``eventjax.backends.numba.set_num_threads``
caps them, and takes effect on the next call without recompiling. The two
settings are timed in alternating blocks in one process, so load drifts
reach both alike.
"""

from __future__ import annotations

import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej
from eventjax.backends.numba import threads as numba_threads

N = 100_000
CONN = 100
RATE = 0.02
BLOCKS = 15
CALLS = 5


def _problem(rng):
    indices = rng.integers(0, N, size=(N, CONN), dtype=np.int32)
    data = rng.standard_normal(N * CONN, dtype=np.float32)
    indptr = np.arange(0, N * CONN + 1, CONN, dtype=np.int32)
    spikes = rng.random(N) < RATE
    v = rng.standard_normal(N, dtype=np.float32)
    return (jnp.asarray(data), jnp.asarray(indices.ravel()), jnp.asarray(indptr), jnp.asarray(spikes),
            jnp.asarray(v), jnp.asarray(data.reshape(N, CONN)), jnp.asarray(indices))


def _cases(data, indices, indptr, spikes, v, w2, idx2):
    """name -> (jitted call, its arguments); the arrays are arguments, never baked-in constants."""
    kw = {'shape': (N, N), 'backend': 'numba'}
    return {
        'binary_csrmv': (jax.jit(lambda d, i, p, s: ej.binary_csrmv(d, i, p, s, **kw)),
                         (data, indices, indptr, spikes)),
        'csrmv': (jax.jit(lambda d, i, p, x: ej.csrmv(d, i, p, x, **kw)), (data, indices, indptr, v)),
        'binary_fcnmv': (jax.jit(lambda w, i, s: ej.binary_fcnmv(w, i, s, **kw)), (w2, idx2, spikes)),
        'fcnmv': (jax.jit(lambda w, i, x: ej.fcnmv(w, i, x, **kw)), (w2, idx2, v)),
    }


def _block_us(fn, args) -> float:
    t0 = time.perf_counter()
    for _ in range(CALLS):
        out = fn(*args)
    jax.block_until_ready(out)
    return (time.perf_counter() - t0) / CALLS * 1e6


def main() -> None:
    cases = _cases(*_problem(np.random.default_rng(0)))
    most = numba_threads.get_num_threads()
    print(f'numba threads: 1 against {most} (n = {N:,}, {CONN} connections per row, {RATE:.0%} events)')
    print(f'{"operator":<14} {"1 thread us":>12} {f"{most} threads us":>14} {"speed-up":>9}')
    before = ej.backends.numba.requested_num_threads()
    try:
        for name, (fn, args) in cases.items():
            jax.block_until_ready(fn(*args))
            times = {1: [], most: []}
            for _ in range(BLOCKS):
                for threads in times:
                    ej.backends.numba.set_num_threads(threads)
                    jax.block_until_ready(fn(*args))  # the first call after a change is not timed
                    times[threads].append(_block_us(fn, args))
            one, all_ = statistics.median(times[1]), statistics.median(times[most])
            print(f'{name:<14} {one:>12.0f} {all_:>14.0f} {one / all_:>8.2f}x')
    finally:
        ej.backends.numba.set_num_threads(before)


if __name__ == '__main__':
    main()
