"""Run the benchmark cases over sizes and backends, with a progress bar on stderr."""

from __future__ import annotations

import sys
import time

import jax
import numpy as np

import eventjax as ej
from benchmarks.anchors import import_optional
from benchmarks.cases import FAMILIES, cases_for, default_sizes
from benchmarks.machine import Machine, measure_machine
from benchmarks.measure import Compared, held_mb, measure_point
from benchmarks.report import Result
from eventjax.config.snapshot import normalize_backend

__all__ = ['SIZES', 'QUICK_SIZES', 'Progress', 'memory_mb', 'run']

SIZES = (1000, 4000, 10_000)
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
    return held_mb(fn.lower(*args).compile())


def _usable_backends(case, platform, wanted):
    status = ej.backends_available()
    have = [b for b in case.backends(platform) if b in status and status[b][platform].available]
    wanted = None if wanted is None else {normalize_backend(b) for b in wanted}
    return [b for b in have if wanted is None or b in wanted]


def compared_packages(notes, compare: bool = True) -> Compared:
    """brainevent and ``scipy.sparse`` where they import; a note for each that does not (none if not ``compare``)."""
    if not compare:
        notes.append('brainevent and scipy were not asked for (--no-compare): their columns show \'-\'.')
        return Compared(None, None)
    brainevent = import_optional('brainevent')
    if brainevent is None:
        notes.append("brainevent does not import here (pip install 'eventjax[compare]'): the be columns show '-'.")
    scipy_sparse = import_optional('scipy.sparse')
    if scipy_sparse is None:
        notes.append("scipy does not import here (pip install 'eventjax[compare]'): the scipy columns show '-'.")
    return Compared(brainevent, scipy_sparse)


def run(families=FAMILIES, backends=None, sizes=None, *, quick=False, seed=0, progress=sys.stderr,
        notes=None, machine: Machine | None = None, compare: bool = True, rate: float | None = None) -> list[Result]:
    """Measure every available case of ``families`` at each size on each backend.

    Args:
        families: any of ``'dense'``, ``'csr'``, ``'fcn'``, ``'jitc'``, ``'delay'``, ``'events'``.
        backends: backend names to keep (None: every backend that can run here).
        sizes: neuron counts ``n`` of the square networks (None: ``SIZES``, or
            ``JITC_SIZES`` for the JITC family alone, ``DELAY_SIZES`` for delays alone).
        quick: fewer timed calls per point.
        seed: seed of the random networks and events.
        progress: stream for the progress bar, or None.
        notes: a list that collects what was skipped and why.
        machine: the bandwidth and call floor to use (None: measured now).
        compare: time brainevent and scipy.sparse beside eventjax where they
            are installed (False: leave their columns empty, a faster run).
        rate: the fraction of neurons with an event, in ``(0, 1]`` (None:
            ``EVENT_RATE``, 2%, or ``JITC_EVENT_RATE`` for the JITC family).

    Returns:
        A list of :class:`~benchmarks.report.Result`.

    Example:
        >>> results = run(['csr'], backends=['jax'], sizes=[200], quick=True, progress=None)
        >>> sorted({r.operator for r in results})[:2]
        ['binary_csrmm T (x16)', 'binary_csrmv']
    """
    if rate is not None and not 0 < rate <= 1:
        raise ValueError(f'rate must be a fraction of the neurons in (0, 1], got {rate}; for example 0.005.')
    platform = jax.default_backend()
    sizes = sizes or default_sizes(families, SIZES)
    notes = [] if notes is None else notes
    if rate is not None:
        notes.append(f'events: {rate:.2%} of the neurons per product (not the default rate).')
        if 'events' in families:
            notes.append('the events family keeps the rate in each of its labels: the rate above does not apply.')
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
    if not plan:
        return []
    machine = machine or measure_machine(quick)
    compared = compared_packages(notes, compare)
    bar = Progress(sum(len(sizes) * (len(b) + 1) for _, b in plan), progress)
    timing = {'budget_s': 0.05 if quick else 0.3, 'max_calls': 50 if quick else 200}
    results = []
    for case, chosen in plan:
        for n in sizes:
            bar.step(f'{case.operator} n={n} build')
            if case.max_n is not None and n > case.max_n:
                notes.append(f'{case.operator} n={n}: skipped: a dense {n} x {n} float32 matrix is '
                             f'{4 * n * n / 1e9:.1f} GB (this family stops at n = {case.max_n:,}).')
                for _ in chosen:
                    bar.step(f'{case.operator} n={n} skipped')
                continue
            rng = np.random.default_rng(seed)
            problem = case.build(n, rng) if rate is None else case.build(n, rng, rate=rate)
            results += measure_point(case, problem, n, chosen, compared=compared, bandwidth_gbs=machine.bandwidth_gbs,
                                     timing=timing, notes=notes, step=bar.step)
            del problem  # a 10**8-entry baseline is freed before the next one is built
    notes[:] = dict.fromkeys(notes)  # a note shared by every case of a size is said once
    return results
