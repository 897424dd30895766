"""brainevent 0.3.0's ``csr_delay_deliver`` on the problem of ``eventjax bench --family delay``, timed the same way.

brainevent 0.3.0 installs on Python 3.12 only, so it runs in its own
environment, not beside eventjax::

    python3.12 -m venv /tmp/be && /tmp/be/bin/pip install 'brainevent==0.3.0'
    /tmp/be/bin/python benchmarks/brainevent_delay.py    # sizes 4000 100000

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

HERE = pathlib.Path(__file__).resolve().parent
SCAN, T0, RATE, STEPS = 20, 7, 0.02, (1, 20)  # as benchmarks.cases: DELAY_SCAN, DELAY_T, EVENT_RATE


def _sibling(stem: str):
    """The module ``<stem>.py`` beside this file, loaded by path (this interpreter has no eventjax)."""
    spec = importlib.util.spec_from_file_location(stem, HERE / f'{stem}.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def median_us(call):
    """Median wall time of ``call()`` as ``brainevent_events.py`` takes it, over up to 300 calls in a second."""
    return _sibling('brainevent_events').median_us(call, budget_s=1.0, max_calls=300)


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
    delay_problem = _sibling('delay_arrays').delay_problem
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
            compiled(*operands).block_until_ready()  # brainevent compiles its numba kernel on the first call
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
