"""Per-call GPU time of the event-driven products, jax vs warp (run by tools/gpu_check.sh).

m = n = 4,000 and 100,000 with 100 connections per row, 2% events; median
of repeated jitted calls, synchronised.
"""

import statistics
import time

import jax

import eventjax as ej


def per_call_us(f, *args, calls=200, repeats=5):
    jax.block_until_ready(f(*args))
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            y = f(*args)
        jax.block_until_ready(y)
        samples.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(samples)


def table(n):
    A = ej.random_fixed_num_conn(jax.random.key(0), n, n, 100, weight=0.5)
    csr = A.tocsr()
    spikes = jax.random.uniform(jax.random.key(1), (n,)) < 0.02
    v = jax.random.normal(jax.random.key(2), (n,))
    ops = {
        'binary_csrmv(transpose=True)': lambda s, b: ej.binary_csrmv(
            csr.data, csr.indices, csr.indptr, s, shape=(n, n), transpose=True, backend=b),
        'binary_csrmv(transpose=False)': lambda s, b: ej.binary_csrmv(
            csr.data, csr.indices, csr.indptr, s, shape=(n, n), transpose=False, backend=b),
        'csrmv(transpose=False)': lambda s, b: ej.csrmv(
            csr.data, csr.indices, csr.indptr, v, shape=(n, n), backend=b),
        'binary_fcnmv(transpose=True)': lambda s, b: ej.binary_fcnmv(
            A.weights, A.indices, s, shape=(n, n), transpose=True, backend=b),
    }
    for name, op in ops.items():
        row = [per_call_us(jax.jit(lambda s, b=b, op=op: op(s, b)), spikes) for b in ('jax', 'warp')]
        print(f'{n:8d} {name:34s}' + ''.join(f'{t:10.1f}' for t in row), flush=True)
    if n <= 4_000:
        dense = csr.todense()
        print(f'{n:8d} {"dense jnp spikes @ W":34s}'
              f'{per_call_us(jax.jit(lambda s: s.astype(dense.dtype) @ dense), spikes):10.1f}')


def main():
    print(f'device: {jax.devices()[0].device_kind}')
    print(f'{"n":>8s} {"operator":34s}' + ''.join(f'{b:>10s}' for b in ('jax', 'warp')))
    for n in (4_000, 100_000):
        table(n)


if __name__ == '__main__':
    main()
