"""Event-driven products against dense and BCSR baselines, per backend (µs per call).

m = n = 4,000, 100 connections per row, 2% of the events active; then the
cost of ``binary_csrmv(transpose=True)`` as activity grows from 0.1% to 50%.
Every call is jitted and timed warm (median of repeats).
"""

from __future__ import annotations

import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import sparse

import eventjax as ej
from eventjax.kernels.csr.binary_csrmv import _binary_csrmv

M = N = 4000
CONN = 100
ACTIVITY = 0.02
SCALING = (0.001, 0.005, 0.02, 0.1, 0.5)


def _time(fn, *args, min_seconds=0.2, max_repeats=2000) -> float:
    """Median µs per call of a jitted ``fn`` (after a warm-up call)."""
    jax.block_until_ready(fn(*args))
    samples, start = [], time.perf_counter()
    while len(samples) < 5 or (time.perf_counter() - start < min_seconds and len(samples) < max_repeats):
        t0 = time.perf_counter()
        jax.block_until_ready(fn(*args))
        samples.append(time.perf_counter() - t0)
    return statistics.median(samples) * 1e6


def _matrix(rng):
    indices = np.stack([rng.choice(N, CONN, replace=False) for _ in range(M)]).astype(np.int32).ravel()
    indptr = np.arange(0, M * CONN + 1, CONN, dtype=np.int32)
    data = rng.normal(size=M * CONN).astype(np.float32)
    return jnp.asarray(data), jnp.asarray(indices), jnp.asarray(indptr)


def _spikes(rng, length, activity):
    s = np.zeros(length, bool)
    s[rng.choice(length, max(1, int(round(activity * length))), replace=False)] = True
    return jnp.asarray(s)


def _rows(data, indices, indptr, dense, spikes, backends):
    csr = dict(shape=(M, N))
    v = spikes.astype(jnp.float32)
    rows = []
    for b in backends:
        for transpose in (True, False):
            f = jax.jit(lambda d, i, p, s, t=transpose, b=b: ej.binary_csrmv(d, i, p, s, transpose=t, backend=b,
                                                                             **csr))
            rows.append((f'binary_csrmv(transpose={transpose})', b, _time(f, data, indices, indptr, spikes)))
        f = jax.jit(lambda d, i, p, x, b=b: ej.csrmv(d, i, p, x, backend=b, **csr))
        rows.append(('csrmv', b, _time(f, data, indices, indptr, v)))
        for transpose in (True, False):
            f = jax.jit(lambda w, s, t=transpose, b=b: ej.binary_densemv(w, s, transpose=t, backend=b))
            rows.append((f'binary_densemv(transpose={transpose})', b, _time(f, dense, spikes)))
    rows.append(('dense jnp: v @ W', 'xla', _time(jax.jit(lambda w, x: x @ w), dense, v)))
    bcsr = sparse.BCSR((data, indices, indptr), shape=(M, N))
    rows.append(('BCSR: A @ v', 'xla', _time(jax.jit(lambda a, x: a @ x), bcsr, v)))
    # BCSR has no transpose in jax 0.10; its BCOO form stands in for v @ A.
    rows.append(('BCOO (from BCSR): A.T @ v', 'xla', _time(jax.jit(lambda a, x: a.T @ x), bcsr.to_bcoo(), v)))
    return rows


def main() -> None:
    rng = np.random.default_rng(0)
    data, indices, indptr = _matrix(rng)
    dense = ej.CSR((data, indices, indptr), shape=(M, N)).todense()
    spikes = _spikes(rng, M, ACTIVITY)
    backends = _binary_csrmv.primitive.available_backends('cpu')
    rows = _rows(data, indices, indptr, dense, spikes, backends)
    dense_us = next(us for name, _, us in rows if name.startswith('dense jnp'))
    print(f'\n== m = n = {M}, {CONN} connections/row, {ACTIVITY:.0%} events, float32, µs per call ==')
    print(f'{"operator":34s}{"backend":>8s}{"µs":>11s}{"vs dense":>10s}')
    for name, backend, us in rows:
        print(f'{name:34s}{backend:>8s}{us:11.1f}{dense_us / us:9.1f}x')

    print('\n== binary_csrmv(transpose=True): cost vs activity, µs per call ==')
    print(f'{"events":>10s}' + ''.join(f'{b:>10s}' for b in backends))
    for activity in SCALING:
        s = _spikes(rng, M, activity)
        cells = []
        for b in backends:
            f = jax.jit(lambda d, i, p, s, b=b: ej.binary_csrmv(d, i, p, s, shape=(M, N), transpose=True, backend=b))
            cells.append(_time(f, data, indices, indptr, s))
        print(f'{activity:10.1%}' + ''.join(f'{us:10.1f}' for us in cells))


if __name__ == '__main__':
    main()
