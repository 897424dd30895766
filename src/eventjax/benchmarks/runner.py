"""Run the benchmark cases over sizes and backends, with a progress bar on stderr."""

from __future__ import annotations

import functools
import sys
import time

import jax
import numpy as np

import eventjax as ej
from eventjax.benchmarks.cases import FAMILIES, cases_for, default_sizes
from eventjax.benchmarks.report import Result
from eventjax.benchmarks.timing import median_us
from eventjax.config.snapshot import normalize_backend

__all__ = ['SIZES', 'QUICK_SIZES', 'Progress', 'memory_mb', 'run']

SIZES = (1000, 2000, 4000)
QUICK_SIZES = (500, 2000)


class Progress:
    """A one-line text progress bar (no dependency); silent when ``stream`` is None."""

    def __init__(self, total: int, stream=sys.stderr, width: int = 28):
        self.total, self.done, self.stream, self.width = max(total, 1), 0, stream, width
        self.start = time.perf_counter()

    def step(self, label: str) -> None:
        self.done += 1
        if self.stream is None:
            return
        filled = self.width * self.done // self.total
        bar = '#' * filled + '.' * (self.width - filled)
        elapsed = time.perf_counter() - self.start
        text = f'[{bar}] {self.done}/{self.total} {elapsed:5.1f}s {label[:40]:<40}'
        if getattr(self.stream, 'isatty', lambda: False)():
            self.stream.write('\r' + text + ('\n' if self.done >= self.total else ''))
        elif self.done * 10 // self.total != (self.done - 1) * 10 // self.total or self.done == self.total:
            # A log file gets a line per tenth, not one carriage-return soup.
            self.stream.write(text.rstrip() + '\n')
        self.stream.flush()


def memory_mb(fn, args) -> float | None:
    """What the compiled call holds in memory (arguments, outputs and XLA temporaries), from XLA's analysis.

    The stored matrix is an argument, so a CSR product counts its arrays and a
    JITC product only its few parameters; None where XLA gives no analysis.

    Example:
        >>> import jax.numpy as jnp
        >>> round(memory_mb(jax.jit(lambda x: x + 1), (jnp.ones(2**18),)), 1)
        2.0
    """
    return _held_mb(fn.lower(*args).compile())


def _held_mb(compiled) -> float | None:
    try:
        stats = compiled.memory_analysis()
    except Exception:  # an analysis is a nicety: no number rather than no benchmark
        return None
    if stats is None:
        return None
    total = stats.argument_size_in_bytes + stats.output_size_in_bytes + stats.temp_size_in_bytes
    return (total - stats.alias_size_in_bytes) / 2**20


def _measure(timer, fn, args) -> tuple[float, float | None]:
    """Median time and held memory of ``jit(fn)(*args)``, compiled once for both."""
    compiled = jax.jit(fn).lower(*args).compile()
    return timer(compiled, args), _held_mb(compiled)


def _usable_backends(case, platform, wanted):
    status = ej.backends_available()
    have = [b for b in case.backends(platform) if b in status and status[b][platform].available]
    wanted = None if wanted is None else {normalize_backend(b) for b in wanted}
    return [b for b in have if wanted is None or b in wanted]


def run(families=FAMILIES, backends=None, sizes=None, *, quick=False, seed=0, progress=sys.stderr,
        notes=None) -> list[Result]:
    """Measure every available case of ``families`` at each size on each backend.

    Args:
        families: any of ``'dense'``, ``'csr'``, ``'fcn'``, ``'jitc'``.
        backends: backend names to keep (None: every backend that can run here).
        sizes: neuron counts ``n`` of the square networks (None: ``SIZES``, or
            ``JITC_SIZES`` for the JITC family alone).
        quick: fewer timed calls per point.
        seed: seed of the random networks and events.
        progress: stream for the progress bar, or None.
        notes: a list that collects what was skipped and why.

    Returns:
        A list of :class:`~eventjax.benchmarks.report.Result`.

    Example:
        >>> results = run(['csr'], backends=['jax'], sizes=[200], quick=True, progress=None)
        >>> sorted({r.operator for r in results})[:2]
        ['binary_csrmm T (x16)', 'binary_csrmv']
    """
    platform = jax.default_backend()
    sizes = sizes or default_sizes(families, SIZES)
    notes = [] if notes is None else notes
    plan = []
    for case in cases_for(families):
        if not case.available():
            notes.append(f'{case.operator}: eventjax.{case.function} is not available in this install; skipped.')
            continue
        chosen = _usable_backends(case, platform, backends)
        if not chosen:
            notes.append(f'{case.operator}: none of the requested backends runs on {platform}; skipped.')
            continue
        plan.append((case, chosen))
    bar = Progress(sum(len(sizes) * (len(b) + 1) for _, b in plan), progress)
    timer = functools.partial(median_us, budget_s=0.05 if quick else 0.3, max_calls=50 if quick else 200)
    results = []
    for case, chosen in plan:
        for n in sizes:
            problem = case.build(n, np.random.default_rng(seed))
            bar.step(f'{case.operator} n={n} {problem.baseline}')
            per_backend = problem.baseline != 'dense jnp'
            dense_us = dense_mb = None
            if problem.dense is None:
                notes.append(f'{case.operator} n={n}: no {problem.baseline} baseline (too big to store).')
            elif not per_backend:
                dense_us, dense_mb = _measure(timer, problem.dense, problem.dense_args)
            for backend in chosen:
                bar.step(f'{case.operator} n={n} {backend}')
                if per_backend and problem.dense is not None:
                    dense_us, dense_mb = _measure(timer, functools.partial(problem.dense, backend=backend),
                                                  problem.dense_args)
                us, mb = _measure(timer, functools.partial(problem.call, backend=backend), problem.args)
                results.append(Result(case.family, case.operator, backend, n, problem.conn_per_row, us, dense_us,
                                      baseline=problem.baseline, memory_mb=mb, baseline_mb=dense_mb))
            del problem  # a 10**8-entry baseline is freed before the next one is built
    return results
