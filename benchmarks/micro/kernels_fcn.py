"""FCN operators next to CSR on the same connectivity, per backend (one run).

m = n = 4,000, k = 100 connections per row, 2% of the events active. The FCN
matrix comes from ``random_fixed_num_conn``; the CSR is its ``tocsr()``, so
both hold exactly the same 400,000 connections; a last line shows the numba
event scatter as the active fraction grows. Each cell is the median
per-call time in µs of a jitted call on this CPU (``block_until_ready``).
"""

from __future__ import annotations

import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej

M = N = 4_000
K = 100
ACTIVE = 0.02
BACKENDS = ('jax', 'numba', 'warp')
BUDGET_S = 0.3


def _time_us(f, *args) -> float:
    jax.block_until_ready(f(*args))
    times, start = [], time.perf_counter()
    while len(times) < 5 or (time.perf_counter() - start < BUDGET_S and len(times) < 200):
        t0 = time.perf_counter()
        jax.block_until_ready(f(*args))
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def _operands():
    key = jax.random.key(0)
    fcn = ej.random_fixed_num_conn(key, M, N, K, weight=lambda k, s: jax.random.normal(k, s))
    csr = fcn.tocsr()
    rng = np.random.default_rng(0)
    spikes = jnp.asarray(rng.random(M) < ACTIVE)
    v = jnp.asarray(rng.normal(size=N).astype(np.float32))
    return fcn, csr, spikes, v


def _rows(spikes, v):
    """(label, fcn call, csr call, operand) for each product; arrays are jit arguments, not constants."""
    for name, fcn_fn, csr_fn, x, transpose in [
        ('binary mv, transpose=True (event scatter)', ej.binary_fcnmv, ej.binary_csrmv, spikes, True),
        ('binary mv, transpose=False (gather)', ej.binary_fcnmv, ej.binary_csrmv, spikes, False),
        ('float mv, transpose=False', ej.fcnmv, ej.csrmv, v, False),
        ('float mv, transpose=True', ej.fcnmv, ej.csrmv, v, True),
    ]:
        def f(backend, x, A, fcn_fn=fcn_fn, transpose=transpose):
            return fcn_fn(A.weights, A.indices, x, shape=(M, N), transpose=transpose, backend=backend)

        def c(backend, x, A, csr_fn=csr_fn, transpose=transpose):
            return csr_fn(A.data, A.indices, A.indptr, x, shape=(M, N), transpose=transpose, backend=backend)

        yield name, f, c, x


def _scaling(fcn) -> None:
    """binary_fcnmv(transpose=True) on numba as the events grow: the cost follows events x k."""
    call = jax.jit(lambda A, s: ej.binary_fcnmv(A.weights, A.indices, s, shape=(M, N), transpose=True,
                                                backend='numba'))
    rng = np.random.default_rng(1)
    cells = [f'{rate:.1%}: {_time_us(call, fcn, jnp.asarray(rng.random(M) < rate)):.1f}'
             for rate in (0.001, 0.01, 0.1, 0.5)]
    print(f'{"event scatter (numba) vs active fraction":44s}  ' + ', '.join(cells) + ' µs')


def main() -> None:
    fcn, csr, spikes, v = _operands()
    print(f'\n== FCN vs CSR, m = n = {M}, k = {K}, {ACTIVE:.0%} events ({int(spikes.sum())} active); '
          f'median µs per call ==')
    header = f'{"product":44s}' + ''.join(f'{f"fcn/{b}":>12s}{f"csr/{b}":>12s}' for b in BACKENDS)
    print(header)
    for name, f, c, x in _rows(spikes, v):
        cells = []
        for backend in BACKENDS:
            for fn, mat in ((f, fcn), (c, csr)):
                call = jax.jit(lambda mat, x, fn=fn, backend=backend: fn(backend, x, mat))
                try:
                    cells.append(f'{_time_us(call, mat, x):12.1f}')
                except Exception as exc:  # a backend missing here is reported, not fatal
                    cells.append(f'{type(exc).__name__[:11]:>12s}')
        print(f'{name:44s}' + ''.join(cells))
    _scaling(fcn)
    dense = jax.jit(lambda d, x: x @ d)
    matrix = fcn.todense()  # one scatter of the m * k weights
    print(f'{"dense jnp (spikes as float) @ A":44s}{_time_us(dense, matrix, spikes.astype(jnp.float32)):12.1f}')


if __name__ == '__main__':
    main()
