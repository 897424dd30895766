"""Scenario 5: numba ``prange`` kernels called from several threads at once.

A ``parallel=True`` matrix-vector kernel runs its rows with ``prange`` and,
after the loop, reports an error if any product came out non-finite (the
reduction pattern the backends README prescribes). Eight threads call it
eagerly and under ``jit`` on a few shapes, now and then with a NaN in the
vector: clean calls must match NumPy, NaN calls must raise, and nothing may
abort or deadlock (the per-call watch turns a hang into a failed run with
every stack dumped).
"""

from __future__ import annotations

import functools
import time

import jax
import numpy as np

import eventjax as ej
from stress import operators as ops
from stress.harness import Report, run_threads, watched

try:  # module globals, not closure cells, so the bridge can cache the handler on disk
    import numba

    from eventjax.backends.numba import report_error
except ImportError:  # the scenario reports itself skipped
    numba = report_error = None

SHAPES = ((64, 48), (200, 33), (7, 300))


@functools.cache
def parallel_primitive() -> ej.XLACustomKernel:
    prim = ej.XLACustomKernel('stress_prange_matvec')
    prim.def_numba_kernel(_generator)
    return prim


def primitives() -> tuple:
    """The primitives this scenario defines, for ``python -m stress`` to define before any scenario runs."""
    return (parallel_primitive(),) if 'numba' in ops.usable_cpu_backends() else ()


def _generator(outs):
    @numba.njit(parallel=True)
    def matvec(w, x, y, err):
        m, n = w.shape
        bad = -1
        for i in numba.prange(m):
            acc = 0.0
            for j in range(n):
                acc += w[i, j] * x[j]
            y[i] = acc
            if not np.isfinite(acc):
                bad = max(bad, i)
        if bad >= 0:
            report_error(err, 'prange matvec: non-finite result in row ' + str(bad))

    return matvec


def call(w, x, jit: bool):
    prim = parallel_primitive()
    out = jax.ShapeDtypeStruct((w.shape[0],), w.dtype)
    fn = _jitted() if jit else prim
    return fn(w, x, outs=out) if not jit else fn(w, x)


@functools.cache
def _jitted():
    prim = parallel_primitive()
    return jax.jit(lambda w, x: prim(w, x, outs=jax.ShapeDtypeStruct((w.shape[0],), w.dtype)))


def warm(report: Report, who: str = 'warm-up', data=None) -> None:
    """Call every shape, eagerly and jitted, once and check it: all the scenario compiles."""
    if 'numba' not in ops.usable_cpu_backends():
        return
    if data is None:
        rng = np.random.default_rng(0)
        data = [(rng.normal(size=s).astype(np.float32), rng.normal(size=s[1]).astype(np.float32)) for s in SHAPES]
    for w, x in data:
        for jit in (False, True):
            what = f'{who}: prange warm-up {w.shape} jit={jit}'
            with watched(what):
                got = np.asarray(call(w, x, jit))
            expected = w.astype(np.float64) @ x.astype(np.float64)
            bad = not np.allclose(got, expected, rtol=ops.RTOL, atol=ops.ATOL)
            report.add(1, 1, wrong=bad, failure=bad and f'{what}: max error {np.max(np.abs(got - expected)):.3g}')


def run(seconds: float, threads: int = 8, long: bool = False) -> Report:
    report = Report('prange')
    if 'numba' not in ops.usable_cpu_backends():
        report.extra['skipped'] = 'numba not available'
        return report
    from eventjax.backends.numba import bridge as numba_bridge  # noqa: PLC0415

    report.extra['layer'] = numba_bridge.threading_layer()
    seed = int(time.time()) % 100_000 + 5
    rng = np.random.default_rng(seed)
    data = [(rng.normal(size=s).astype(np.float32), rng.normal(size=s[1]).astype(np.float32)) for s in SHAPES]
    start = time.monotonic()
    warm(report, 'prange', data)  # compile once per shape and mode before the threads start
    report.extra['warm_up_s'] = round(time.monotonic() - start, 1)
    deadline = time.monotonic() + max(seconds, 4.0)

    def worker(i):
        local = np.random.default_rng(seed + i)
        for _ in range(1_000_000):
            if time.monotonic() > deadline:
                break
            w, x = data[int(local.integers(len(data)))]
            jit = bool(local.integers(2))
            poison = local.random() < 0.1
            if poison:
                x = x.copy()
                x[int(local.integers(x.size))] = np.nan
            what = f'worker {i}: prange matvec {w.shape} jit={jit} nan={poison}'
            try:
                with watched(what):
                    got = np.asarray(call(w, x, jit))
            except Exception as exc:
                ok = poison and 'non-finite' in str(exc)
                report.add(1, 1, failure=None if ok else f'{what}: raised {type(exc).__name__}: {exc}')
                continue
            if poison:
                report.add(1, 1, failure=f'{what}: NaN input returned instead of raising')
                continue
            expected = w.astype(np.float64) @ x.astype(np.float64)
            bad = not np.allclose(got, expected, rtol=ops.RTOL, atol=ops.ATOL)
            report.add(1, 1, wrong=bad, failure=bad and f'{what}: max error {np.max(np.abs(got - expected)):.3g}')

    report.failures.extend(run_threads(threads, worker, seconds + 300))
    report.seconds = time.monotonic() - start
    return report
