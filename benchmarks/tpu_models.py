"""The models of ``eventjax bench``'s TPU table: CUBA and PD14, microseconds per step on each backend.

CUBA is ``docs/examples/cuba.py`` (4,000 neurons, 80 synapses each,
``binary_csrmv`` with ``transpose=True`` each 0.1 ms step); PD14 is
``examples.microcircuit`` (its delivery takes the backend) at the scale
asked for, in this process: on a TPU one program holds the chip, so
neither runs as a child process.

Example:
    >>> import jax
    >>> from benchmarks import tpu_models
    >>> row, = tpu_models.cuba_rows(jax.devices('cpu')[0], ['jax'], ms=1.0)
    >>> row.op, row.extra['steps']
    ('CUBA', 10)
"""

from __future__ import annotations

import importlib.util
import pathlib
import time

import numpy as np

from benchmarks.tpu_table import Row, _measure

__all__ = ['cuba_rows', 'pd14_rows']

_ROOT = pathlib.Path(__file__).resolve().parent.parent


def _cuba_module():
    spec = importlib.util.spec_from_file_location('eventjax_docs_cuba', _ROOT / 'docs' / 'examples' / 'cuba.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def cuba_rows(device, backends, *, ms=1000.0, seconds=120.0, seed=0, report=None):
    """CUBA for ``ms`` of model time on each backend; ``extra['same_spikes']``: as the first backend's."""
    cuba = _cuba_module()
    steps = int(round(ms / cuba.DT))
    rows, first = [], {}
    for backend in backends:
        row = Row('models', 'CUBA', cuba.N, backend)

        def fn(deadline, backend=backend, row=row):
            exc, inh, v0 = cuba.make_network(seed)
            t0 = time.perf_counter()
            spikes, wall = cuba.simulate(exc, inh, v0, steps, backend)
            total = time.perf_counter() - t0
            ref = first.setdefault('spikes', spikes)
            row.extra.update(steps=steps, neurons=cuba.N, synapses=int(exc[2][-1] + inh[2][-1]),
                             rate_hz=float(spikes.sum() / cuba.N / (ms * 1e-3)), rtf=wall / (ms * 1e-3),
                             same_spikes=bool(np.array_equal(spikes, ref)))
            return wall / steps * 1e6, None, total - wall, None

        rows.append(_measure(row, seconds, device, fn))
        if report:
            report(row)
    return rows


def pd14_rows(device, backends, *, scale=0.1, k_scale=None, ms=100.0, warmup_ms=100.0, seconds=300.0, seed=55,
              report=None):
    """PD14 (dc drive, float32) at ``scale``: ``ms`` of model time after ``warmup_ms``, per backend.

    The network is built once (its time is ``extra['build_s']`` of the first row); each backend's chunk of
    steps is compiled before the timed run.
    """
    from examples.microcircuit import params as P
    from examples.microcircuit import simulation

    built, rows = {}, []
    for backend in backends:
        row = Row('models', 'PD14', 0, backend)

        def fn(deadline, backend=backend, row=row):
            if 'model' not in built:
                t0 = time.perf_counter()
                built['model'] = simulation.build(scale, k_scale, 'dc', seed, np.float32)
                row.extra['build_s'] = time.perf_counter() - t0
            model = built['model']
            runner = simulation.Runner(model, backend, seed)
            compile_s = runner.compile()
            runner.run(warmup_ms, 'warm-up', None, record=False)
            _, ids, wall = runner.run(ms, 'simulate', None)
            steps = int(round(ms / P.DT))
            row.extra.update(steps=steps, neurons=model.n, synapses=int(model.nnz), rtf=wall / (ms * 1e-3),
                             rate_hz=float(len(ids) / model.n / (ms * 1e-3)), scale=scale, ms=ms,
                             warmup_ms=warmup_ms,
                             k_scale=k_scale if k_scale is not None else scale)
            return wall / steps * 1e6, None, compile_s, None

        rows.append(_measure(row, seconds, device, fn))
        row.n = row.extra.get('neurons', 0)
        if report:
            report(row)
    return rows
