"""brainevent's ``binary_csrmv`` (events into rows) on the arrays of ``eventjax bench --family events``.

It imports NumPy, JAX and brainevent only, never eventjax, so it runs in
another environment (brainevent 0.3.0 installs on Python 3.12 only)::

    python3.12 brainevent_events.py --sizes 4000 100000 --rates 0.02 0.001

``eventjax bench --family events --brainevent-python PYTHON`` runs it so.
It loads ``events_arrays.py`` beside it by path, builds each problem from
the seed as the bench does, and prints one JSON line per point: version,
``n``, rate, backend and the median microseconds per jitted call
(compilation excluded; up to 200 calls in 0.3 s).
"""

from __future__ import annotations

import argparse
import functools
import importlib.util
import json
import pathlib
import statistics
import time

ARRAYS = pathlib.Path(__file__).resolve().parent / 'events_arrays.py'


def _events_problem():
    spec = importlib.util.spec_from_file_location('events_arrays', ARRAYS)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.events_problem


def median_us(call, budget_s=0.3, max_calls=200):
    """Median wall time of ``call()`` (blocked until ready) over up to ``max_calls`` calls in ``budget_s``."""
    times, start = [], time.perf_counter()
    while len(times) < max_calls and (time.perf_counter() - start < budget_s or len(times) < 5):
        t0 = time.perf_counter()
        call().block_until_ready()
        times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6


def main(argv=None) -> None:
    import brainevent
    import jax
    import numpy as np
    from brainevent._csr.binary import _make_binary_csrmv_workspace

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--sizes', nargs='+', type=int, default=[4000, 100_000])
    parser.add_argument('--rates', nargs='+', type=float, default=[0.02, 0.001])
    parser.add_argument('--k', type=int, default=100)
    parser.add_argument('--seed', type=int, default=0)
    args = parser.parse_args(argv)
    events_problem = _events_problem()
    for n in args.sizes:
        for rate in args.rates:
            data, indices, indptr, spikes = (jax.numpy.asarray(a) for a in events_problem(
                n, np.random.default_rng(args.seed), rate, k=min(n, args.k)))
            ws = _make_binary_csrmv_workspace(indptr)
            for backend in brainevent.binary_csrmv_p.available_backends('cpu'):
                fn = jax.jit(functools.partial(brainevent.binary_csrmv, shape=(n, n), transpose=True,
                                               backend=backend))
                compiled = fn.lower(data, indices, indptr, spikes, workspace=ws).compile()
                us = median_us(functools.partial(compiled, data, indices, indptr, spikes, workspace=ws))
                print(json.dumps({'version': brainevent.__version__, 'n': n, 'rate': rate, 'backend': backend,
                                  'us': us}), flush=True)


if __name__ == '__main__':
    main()
