"""brainevent 0.3.0's ``csr_delay_deliver`` on the problem of ``eventjax bench --family delay``, timed the same way.

brainevent 0.3.0 installs on Python 3.12 only, so it runs in its own
environment, not beside eventjax::

    python3.12 -m venv /tmp/be && /tmp/be/bin/pip install 'brainevent==0.3.0'
    /tmp/be/bin/python src/eventjax/benchmarks/brainevent_delay.py    # sizes 4000 100000

``eventjax bench --family delay --brainevent-python PYTHON`` runs it so
(``--json``: one JSON line per size and backend) and compares in the same
run. It loads ``delay_arrays.py`` beside it by path (NumPy only)
and builds the same arrays from the same seed as ``eventjax bench`` (100
synapses per neuron, 2% events, delays uniform in 1-20 steps, a ring of 21
steps; then one spike vector per step). Like ``eventjax bench`` it times a
jitted ``lax.scan`` of 20 steps from t = 7 whose carry is the ring (zeroed
once per scan), which brainevent's numba kernel also updates in place
(it aliases the ring to its output), and prints the median microseconds per
step of each brainevent CPU backend, compilation excluded. ``--single``
also times one call on a ring that is not donated (XLA copies it first).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import pathlib
import statistics
import time

ARRAYS = pathlib.Path(__file__).resolve().parent / 'delay_arrays.py'
SCAN, T0, RATE, STEPS = 20, 7, 0.02, (1, 20)  # as eventjax.benchmarks.cases: DELAY_SCAN, DELAY_T, EVENT_RATE


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


def _scan(brainevent, jax, data, indices, indptr, delays, spikes, *, shape, length, backend):
    jnp = jax.numpy

    def step(ring, x):
        t, sp = x
        return brainevent.csr_delay_deliver(ring, sp, data, indices, indptr, delays, t, shape=shape,
                                            backend=backend), None

    ts = jnp.arange(SCAN, dtype=jnp.int32) + T0
    return jax.lax.scan(step, jnp.zeros((length, shape[1]), jnp.float32), (ts, spikes))[0]


def main(argv=None) -> None:
    import brainevent
    import jax
    import numpy as np

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--sizes', nargs='+', type=int, default=[4000, 100_000])
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--single', action='store_true', help='also time one call on a ring that is not donated')
    parser.add_argument('--json', action='store_true', help='one JSON line per size and backend, nothing else')
    args = parser.parse_args(argv)
    delay_problem = _delay_problem()
    if not args.json:
            print(f'brainevent {brainevent.__version__}, jax {jax.__version__}; microseconds per step of a '
              f'{SCAN}-step lax.scan (the ring its carry)')
    for n in args.sizes:
        rng = np.random.default_rng(args.seed)
        ring, _, data, indices, indptr, delays = delay_problem(n, rng, RATE, k=min(n, 100), steps=STEPS)
        spikes = rng.random((SCAN, n)) < RATE
        operands = tuple(jax.numpy.asarray(a) for a in (data, indices, indptr, delays, spikes))
        for backend in ('numba', 'jax_raw'):
            fn = jax.jit(functools.partial(_scan, brainevent, jax, shape=(n, n), length=ring.shape[0],
                                           backend=backend))
            compiled = fn.lower(*operands).compile()
            us = median_us(functools.partial(compiled, *operands)) / SCAN
            if args.json:
                print(json.dumps({'version': brainevent.__version__, 'n': n, 'backend': backend, 'us': us}),
                      flush=True)
                continue
            line = f'  csr_delay_deliver n={n:>7} {backend:<8} {us:9.1f} us per step'
            if args.single:
                one = jax.jit(lambda r, s, d, i, p, dl, b=backend, shape=(n, n): brainevent.csr_delay_deliver(
                    r, s, d, i, p, dl, T0, shape=shape, backend=b))
                single = (jax.numpy.asarray(ring), operands[4][0], *operands[:4])
                c1 = one.lower(*single).compile()
                line += f'   {median_us(functools.partial(c1, *single)):9.1f} us per single call'
            print(line)


if __name__ == '__main__':
    main()
