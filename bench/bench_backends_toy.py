"""Per-call time of a jitted toy elementwise op (y = 2x + 1) on each backend bridge.

Run: ``PYTHONPATH=src python bench/bench_backends_toy.py [--n 1000] [--calls 2000]``.
Measures dispatch + kernel time of one small call, which is what event-driven
simulation loops pay per step; each backend is warmed up (compiled) first.
"""

from __future__ import annotations

import argparse
import functools
import os
import time

import jax
import jax.numpy as jnp
import numpy as np


def _pure_jax(outs):
    return lambda x: (2 * x + 1,)


@functools.cache
def _warp_affine(dtype):
    from eventjax.backends.warp_bridge import import_warp, warp_dtype  # noqa: PLC0415

    wp = import_warp()
    wt = warp_dtype(dtype)

    @wp.kernel
    def affine(x: wp.array(dtype=wt), y: wp.array(dtype=wt)):
        i = wp.tid()
        y[i] = wt(2) * x[i] + wt(1)

    return affine


def _warp(outs):
    from eventjax.backends.warp_bridge import WarpKernelSpec, warp_kernel_generator  # noqa: PLC0415

    kg = lambda *, outs: WarpKernelSpec(_warp_affine(outs[0].dtype))  # noqa: E731
    return warp_kernel_generator(kg, 'cpu')(outs=outs)


def _pallas(outs):
    from jax.experimental import pallas as pl  # noqa: PLC0415

    from eventjax.backends.pallas_bridge import pallas_kernel_generator  # noqa: PLC0415

    def body(x_ref, y_ref):
        y_ref[...] = 2 * x_ref[...] + 1

    def kg(*, outs):
        return lambda x, *, interpret: pl.pallas_call(body, out_shape=outs[0], interpret=interpret)(x)

    return pallas_kernel_generator(kg, 'cpu')(outs=outs)


BUILDERS = {'jax': _pure_jax, 'warp (cpu)': _warp, 'pallas (interpret)': _pallas}


def time_per_call(f, x, calls: int, repeats: int = 5) -> float:
    """Best-of-``repeats`` mean time of one call, in µs."""
    jax.block_until_ready(f(x))
    best = float('inf')
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            y = f(x)
        jax.block_until_ready(y)
        best = min(best, (time.perf_counter() - start) / calls)
    return best * 1e6


def main(argv=None) -> dict[str, float]:
    """Print and return µs/call of the jitted toy op per backend.

    Example:
        >>> main(['--n', '100', '--calls', '100'])  # doctest: +SKIP
        {'jax': 3.1, 'warp (cpu)': 25.0, 'pallas (interpret)': 9.0}
    """
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument('--n', type=int, default=1000)
    parser.add_argument('--calls', type=int, default=2000)
    args = parser.parse_args(argv)
    x = jnp.asarray(np.random.default_rng(0).standard_normal(args.n), jnp.float32)
    outs = (jax.ShapeDtypeStruct(x.shape, x.dtype),)
    expected = 2 * np.asarray(x) + 1
    results = {}
    print(f'jitted y = 2x + 1, n={args.n}, float32, {os.cpu_count()} CPUs, jax {jax.__version__}')
    for name, build in BUILDERS.items():
        f = jax.jit(build(outs))
        np.testing.assert_allclose(f(x)[0], expected, rtol=1e-6)
        results[name] = time_per_call(f, x, args.calls)
        print(f'  {name:<20s} {results[name]:8.1f} µs/call')
    return results


if __name__ == '__main__':
    main()
