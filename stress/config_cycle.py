"""Scenario 9: flip between two configurations seen before; nothing compiles, memory stays flat.

Two jitted functions over a 2,000 x 2,000 CSR matrix (5% stored): events
into ``binary_csrmv(..., transpose=True)`` and ``2 * csrmv(...)``. Both are
warmed under ``set_backend('cpu', 'numba')`` and under ``'jax'``; then the
main thread flips between the two configurations (1,000 times in the long
mode) with one call of each function after every flip, checked against
NumPy, while two worker threads call them too. Compilations and traces are
counted from JAX's own monitoring events during the flips; both must be 0,
and RSS may grow by less than ``RSS_LIMIT_MIB``. Before content keys every
flip recompiled both functions and kept about 14 MB.
"""

from __future__ import annotations

import functools
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej
from stress.harness import CompileCount, Report, rss_mib

SIZE = 2_000
DENSITY = 0.05
BACKENDS = ('numba', 'jax')
RSS_LIMIT_MIB = 50.0


@functools.cache
def problem(seed: int = 0):
    """The two calls of the scenario: (jitted function, argument, NumPy answer) each, drawn once per process.

    The matrix is drawn as its stored entries (no dense 2,000 x 2,000 copy),
    and the answers are sums over those entries in float64: the scenario's
    own arrays stay a few MiB, so its memory figures are eventjax's and JAX's.
    The CSR arrays are arguments of the jitted functions, not constants
    captured by them: a captured array is embedded in every executable (and
    in the lowering JAX keeps beside it), about 1 MiB each here. The problem
    is cached so that the long run's warm-up compiles the very functions the
    scenario calls.
    """
    rng = np.random.default_rng(seed)
    # Distinct flat positions, sorted: row-major order, as CSR stores them.
    flat = np.unique(rng.integers(0, SIZE * SIZE, size=round(DENSITY * SIZE * SIZE)))
    rows, cols = flat // SIZE, (flat % SIZE).astype(np.int32)
    values = rng.standard_normal(flat.size).astype(np.float32)
    indptr = np.concatenate([[0], np.cumsum(np.bincount(rows, minlength=SIZE))]).astype(np.int32)
    csr = (jnp.asarray(values), jnp.asarray(cols), jnp.asarray(indptr))
    spikes = rng.random(SIZE) < 0.1
    v = rng.standard_normal(SIZE).astype(np.float32)
    shape = (SIZE, SIZE)
    events = jax.jit(lambda d, i, p, s: ej.binary_csrmv(d, i, p, s, shape=shape, transpose=True))
    doubled = jax.jit(lambda d, i, p, v: 2 * ej.csrmv(d, i, p, v, shape=shape))
    values64 = values.astype(np.float64)
    calls = ((functools.partial(events, *csr), jnp.asarray(spikes),
              np.bincount(cols, values64 * spikes[rows], minlength=SIZE)),
             (functools.partial(doubled, *csr), jnp.asarray(v),
              2 * np.bincount(rows, values64 * v[cols], minlength=SIZE)))
    return calls


def warm(report: Report, who: str = 'warm-up') -> None:
    """Compile both functions under both configurations without publishing either, every result checked.

    Each configuration is drafted and warmed (``config.drafting``,
    ``config.warming``) in this thread only, so other threads may trace
    meanwhile; the keys the drafts reserve are the ones :func:`flip_cycle`
    publishes later, so its own warm-up then compiles nothing.
    """
    calls = problem()
    for backend in BACKENDS:
        with ej.config.drafting() as draft:
            ej.set_backend('cpu', backend)
        with ej.config.warming(draft.snapshot):
            bad = _check(calls)
        report.add(2, 2, wrong=bool(bad), failure=bad and f'{who}: config_cycle under {backend}: {bad}')


def _check(calls) -> str | None:
    for fn, arg, want in calls:
        got = np.asarray(fn(arg), np.float64)
        if not np.allclose(got, want, rtol=1e-4, atol=1e-3):
            return f'max error {np.max(np.abs(got - want)):.3g}'
    return None


def flip_cycle(flips: int, seconds: float, workers: int = 2) -> dict:
    """Warm both configurations, then flip ``flips`` times (at most ``seconds``); return the figures."""
    calls = problem()
    errors: list[str] = []
    start = time.monotonic()
    for backend in BACKENDS:
        ej.set_backend('cpu', backend)
        if bad := _check(calls):
            errors.append(f'warm-up under {backend}: {bad}')
    warm_seconds = time.monotonic() - start
    stop = threading.Event()
    worker_calls = [0] * workers

    def worker(i: int) -> None:
        while not stop.is_set():
            if bad := _check(calls):
                errors.append(f'worker {i}: {bad}')
            worker_calls[i] += 1

    rss_before = rss_mib()
    done = 0
    deadline = time.monotonic() + seconds
    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(workers)]
    with CompileCount() as count:
        for t in threads:
            t.start()
        for k in range(flips):
            if time.monotonic() > deadline:
                break
            ej.set_backend('cpu', BACKENDS[(k + 1) % 2])
            if bad := _check(calls):
                errors.append(f'flip {k + 1} to {ej.get_backend("cpu")}: {bad}')
            done += 1
        stop.set()
        for t in threads:
            t.join(600)
    rss_after = rss_mib()
    ej.clear_backends()
    return {
        'flips': done,
        'calls': 2 * done + 2 * sum(worker_calls),
        'compiles': count.compiles,
        'traces': count.traces,
        'rss_growth_mib': None if rss_before is None else round(rss_after - rss_before, 1),
        'warm_seconds': round(warm_seconds, 1),
        'errors': errors,
    }


def run(seconds: float, long: bool = False) -> Report:
    report = Report('config_cycle')
    start = time.monotonic()
    figures = flip_cycle(1000 if long else 200, seconds)
    report.seconds = time.monotonic() - start
    report.add(figures['calls'], figures['calls'], wrong=bool(figures['errors']))
    for error in figures['errors'][:20]:
        report.add(failure=error)
    if figures['compiles'] or figures['traces']:
        report.add(failure=f'{figures["compiles"]} compiles and {figures["traces"]} traces while flipping '
                           f'between two warm configurations (want 0)')
    growth = figures['rss_growth_mib']
    if growth is not None and growth >= RSS_LIMIT_MIB:
        report.add(failure=f'RSS grew {growth} MiB over {figures["flips"]} flips (limit {RSS_LIMIT_MIB})')
    report.extra.update({k: figures[k] for k in ('flips', 'compiles', 'traces', 'rss_growth_mib')})
    return report
