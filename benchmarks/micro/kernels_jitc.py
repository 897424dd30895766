"""JITC products next to CSR products of the same matrix (numba, one run).

Square networks of n neurons, 100 connections per row on average
(``prob = 100 / n``), 2% of the events active, homogeneous weights: the
statistics of the brainevent comparison in the JITC docs. The CSR matrix is
``JITCMatrix.tocsr()``, so both hold exactly the same connections. Each cell
is the median per-call time in µs of a jitted call on this CPU, and the
peak-RSS growth of building and running each form. ``JITC_SIZES`` (comma
separated) overrides the sizes; 10**6 runs JITC only (its CSR needs ~1 GB).
"""

from __future__ import annotations

import os
import resource
import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej

CONN = 100
ACTIVE = 0.02
BUDGET_S = 0.5
CSR_MAX_N = 100_000


def _time_us(f, *args) -> float:
    jax.block_until_ready(f(*args))
    times, start = [], time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < BUDGET_S and len(times) < 100):
        t0 = time.perf_counter()
        jax.block_until_ready(f(*args))
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _row(n: int):
    rng = np.random.default_rng(0)
    spikes = jnp.asarray(rng.random(n) < ACTIVE)
    v = jnp.asarray(rng.normal(size=n).astype(np.float32))
    A = ej.JITCMatrix(1.0, prob=CONN / n, seed=0, shape=(n, n), backend='numba')
    # Matrices are jit arguments, not constants: a 10**7-entry CSR baked into
    # the program as a constant would be timed as well.
    scatter = jax.jit(lambda A, s: ej.EventArray(s) @ A)
    gather = jax.jit(lambda A, v: A @ v)
    before = _peak_mb()
    cells = [_time_us(scatter, A, spikes), _time_us(gather, A, v)]
    cells.append(_peak_mb() - before)
    if n <= CSR_MAX_N:
        before = _peak_mb()
        C = A.tocsr()
        with ej.config.override(cpu='numba'):
            cells += [_time_us(scatter, C, spikes), _time_us(gather, C, v), _peak_mb() - before]
    return cells


def main() -> None:
    sizes = [int(s) for s in os.environ.get('JITC_SIZES', '10000,100000').split(',')]
    print(f'\nJITC vs CSR of the same matrix, numba, {CONN} connections per row, {ACTIVE:.0%} events (µs)')
    head = ('n', 'JITC s@A', 'JITC A@v', 'JITC +MB', 'CSR s@A', 'CSR A@v', 'CSR +MB')
    print(''.join(f'{h:>12}' for h in head))
    for n in sizes:
        cells = _row(n)
        print(f'{n:>12}' + ''.join(f'{c:>12.0f}' for c in cells))


if __name__ == '__main__':
    main()
