"""brainevent 0.3.0's ``csr_delay_deliver`` on the arrays of ``eventjax bench --family delay``.

brainevent 0.3.0 installs on Python 3.12 only, so it runs in its own
environment, not beside eventjax::

    python3.12 -m venv /tmp/be && /tmp/be/bin/pip install 'brainevent==0.3.0'
    /tmp/be/bin/python bench/delay_brainevent.py            # sizes 4000 100000

It loads ``src/eventjax/benchmarks/delay_arrays.py`` by path (NumPy only),
builds the same problem from the same seed as ``eventjax bench`` (100
synapses per neuron, 2% events, delays uniform in 1-20 steps, a ring of 21
steps, t = 7), and prints the median microseconds per call of each
brainevent CPU backend, compilation excluded, as ``eventjax bench`` times
its own calls (median over repeated jitted calls).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import pathlib
import statistics
import time

ARRAYS = pathlib.Path(__file__).resolve().parent.parent / 'src' / 'eventjax' / 'benchmarks' / 'delay_arrays.py'


def _delay_problem():
    spec = importlib.util.spec_from_file_location('delay_arrays', ARRAYS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.delay_problem


def median_us(call, budget_s=1.0, max_calls=300):
    """Median wall time of ``call()`` (blocked until ready) over up to ``max_calls`` calls in ``budget_s``."""
    times, start = [], time.perf_counter()
    while len(times) < max_calls and (time.perf_counter() - start < budget_s or len(times) < 5):
        t0 = time.perf_counter()
        call().block_until_ready()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def _deliver(brainevent, ring, spikes, data, indices, indptr, delays, *, shape, backend):
    return brainevent.csr_delay_deliver(ring, spikes, data, indices, indptr, delays, 7, shape=shape, backend=backend)


def main(argv=None) -> None:
    import brainevent
    import jax
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--sizes', nargs='+', type=int, default=[4000, 100_000])
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args(argv)
    delay_problem = _delay_problem()
    print(f'brainevent {brainevent.__version__}, jax {jax.__version__}')
    for n in args.sizes:
        arrays = delay_problem(n, np.random.default_rng(args.seed), 0.02, k=min(n, 100), steps=(1, 20))
        operands = tuple(jax.numpy.asarray(a) for a in arrays)
        for backend in ('numba', 'jax_raw'):
            fn = jax.jit(functools.partial(_deliver, brainevent, shape=(n, n), backend=backend))
            compiled = fn.lower(*operands).compile()
            us = median_us(functools.partial(compiled, *operands))
            print(f'  csr_delay_deliver n={n:>7} {backend:<8} {us:9.1f} us')


if __name__ == '__main__':
    main()
