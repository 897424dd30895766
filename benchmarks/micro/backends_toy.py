"""Per-call time of one toy primitive (y = 2x + 1) on each CPU backend, through XLACustomKernel.

Run: ``python -m benchmarks.micro backends_toy``. Each backend is compiled first; the
figure is the median over repeats of a jitted call, dispatch included.
"""

from __future__ import annotations

import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej

SIZES = (1_000, 100_000)
CALLS = 500
REPEATS = 5


def _per_call_us(f, x) -> float:
    jax.block_until_ready(f(x))
    samples = []
    for _ in range(REPEATS):
        t0 = time.perf_counter()
        for _ in range(CALLS):
            y = f(x)
        jax.block_until_ready(y)
        samples.append((time.perf_counter() - t0) / CALLS * 1e6)
    return statistics.median(samples)


def main() -> None:
    ej.backends.pallas.set_cpu_interpret(True)
    from tests.backends.toys import make_toys  # the same toys the tests check

    affine = make_toys()['affine']
    backends = affine.available_backends('cpu')
    print('\n== toy primitive y = 2x + 1, jitted, float32, median us per call ==')
    print(f'{"n":>8s}' + ''.join(f'{b:>12s}' for b in backends))
    for n in SIZES:
        x = jnp.asarray(np.random.default_rng(0).random(n, np.float32))
        out = jax.ShapeDtypeStruct(x.shape, x.dtype)
        row = [_per_call_us(jax.jit(lambda x, b=b, out=out: affine(x, outs=out, backend=b)), x) for b in backends]
        print(f'{n:8d}' + ''.join(f'{t:12.1f}' for t in row))


if __name__ == '__main__':
    main()
