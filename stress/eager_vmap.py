"""Scenario 10: eager ``vmap`` through ``general_batching_rule`` costs what plain JAX costs, in time and memory.

An eager ``jax.vmap(f)(x)`` calls the batching rule on every call. Two
functions batched only by that rule are called ``CALLS`` times each (a
fraction in short mode), one after the other on each cpu backend: a user
primitive (``stress_scan_only`` of scenario 2) and ``csrmv`` with its weights
batched. Every hundredth result is checked against NumPy. Fails when the
resident set grows by more than ``RSS_BOUND_MIB`` after the warm-up, when
XLA compiles anything after the warm-up, or when a call costs more than
``RATIO_BOUND`` times the same plain-JAX eager ``vmap``.
"""

from __future__ import annotations

import time

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej
from stress import batching
from stress import operators as ops
from stress.harness import Report, watched
from stress.resources import rss_mib

CALLS = 10_000
SHORT_CALLS = 300
RSS_BOUND_MIB = 32.0
# The measured ratio is about 1 (plain JAX's eager vmap dispatches a few ops
# too); the bound leaves room for a loaded machine.
RATIO_BOUND = 4.0
CHECK_EVERY = 100
_COMPILE_EVENT = '/jax/core/compile/backend_compile_duration'

X = np.linspace(-1.0, 1.0, 4 * 8, dtype=np.float32).reshape(4, 8)
W = np.float32(1.5) * np.ones((4, 1), np.float32)
INDPTR, INDICES = np.array([0, 2, 3, 5]), np.array([0, 2, 1, 0, 2])
V = np.array([1.0, 10.0, 100.0], np.float32)
WEIGHTS = np.linspace(0.5, 2.0, 4 * 5, dtype=np.float32).reshape(4, 5)


def _cases(backend: str) -> list[tuple]:
    """(name, eventjax function, plain-JAX function of the same work, argument, NumPy answer)."""
    dense = np.zeros((4, 3, 3), np.float64)
    rows = np.repeat(np.arange(3), np.diff(INDPTR))
    for b in range(4):
        np.add.at(dense[b], (rows, INDICES), WEIGHTS[b])
    index = jnp.asarray(rows * 3 + INDICES)
    return [
        ('stress_scan_only', jax.vmap(lambda x, w: batching.call_scan_only(x, w, backend)),
         jax.vmap(lambda x, w: (x * w[0] + 1, jnp.sum(x, keepdims=True))), (X, W),
         (X.astype(np.float64) * W + 1, X.astype(np.float64).sum(axis=1, keepdims=True))),
        ('csrmv over weights', jax.vmap(lambda w: ej.csrmv(w, INDICES, INDPTR, V, shape=(3, 3), backend=backend)),
         jax.vmap(lambda w: jnp.zeros(9, w.dtype).at[index].add(w).reshape(3, 3) @ V), (WEIGHTS,),
         (dense @ V.astype(np.float64),)),
    ]


def _ms_per_call(fn, args, calls: int) -> float:
    start = time.perf_counter()
    for _ in range(calls):
        jax.block_until_ready(fn(*args))
    return (time.perf_counter() - start) / calls * 1e3


def _check(report: Report, what: str, got, expected) -> None:
    got = [np.asarray(g, np.float64) for g in jax.tree.leaves(got)]
    bad = any(g.shape != e.shape or not np.allclose(g, e, rtol=ops.RTOL, atol=ops.ATOL)
              for g, e in zip(got, expected))
    report.add(0, 1, wrong=bad, failure=bad and f'{what}: wrong result')


def _backends() -> list[str]:
    return sorted(set(batching.SCAN_BACKENDS) & ops.usable_cpu_backends())


def _warm_one(report: Report, what: str, ours, plain, args, expected) -> None:
    with watched(what):
        for _ in range(2):  # warm both functions and anything built lazily on the first call
            _check(report, what, ours(*args), expected)
            jax.block_until_ready(plain(*args))


def warm(report: Report, who: str = 'warm-up') -> None:
    """Every case on every backend twice, checked: what the scenario compiles, compiled in this thread."""
    for backend in _backends():
        for name, ours, plain, args, expected in _cases(backend):
            _warm_one(report, f'{who}: eager_vmap {name} backend={backend}', ours, plain, args, expected)


def run(seconds: float, long: bool = False) -> Report:
    report = Report('eager_vmap')
    calls = CALLS if long else SHORT_CALLS
    compiles = [0]

    def listener(event, duration, **kwargs):
        if event == _COMPILE_EVENT:
            compiles[0] += 1

    start = time.monotonic()
    deadline = start + max(seconds, 20.0) * 3
    ratios = {}
    jax.monitoring.register_event_duration_secs_listener(listener)
    try:
        for backend in _backends():
            for name, ours, plain, args, expected in _cases(backend):
                what = f'{name} backend={backend}'
                _warm_one(report, what, ours, plain, args, expected)
                rss_before, compiles_before = rss_mib(), compiles[0]
                done = 0
                with watched(what):
                    while done < calls and time.monotonic() < deadline:
                        got = ours(*args)
                        done += 1
                        if done % CHECK_EVERY == 0:
                            _check(report, what, got, expected)
                        else:
                            jax.block_until_ready(got)
                report.add(done)
                growth = rss_mib() - rss_before
                if growth > RSS_BOUND_MIB:
                    report.add(failure=f'{what}: RSS grew by {growth:.0f} MiB over {done} eager vmapped calls '
                                       f'(bound {RSS_BOUND_MIB:.0f} MiB)')
                if compiles[0] != compiles_before:
                    report.add(failure=f'{what}: XLA compiled {compiles[0] - compiles_before} times over {done} '
                                       f'eager vmapped calls of one shape')
                if done < calls:
                    report.add(failure=f'{what}: made {done} of {calls} calls in the time bound')
                ms, ms_plain = _ms_per_call(ours, args, 100), _ms_per_call(plain, args, 100)
                ratios[f'{backend}/{name}'] = f'{ms:.2f}/{ms_plain:.2f}ms +{growth:.0f}MiB'
                if ms > RATIO_BOUND * ms_plain:
                    report.add(failure=f'{what}: {ms:.2f} ms per eager vmapped call, plain JAX '
                                       f'{ms_plain:.2f} ms (bound {RATIO_BOUND:.0f}x)')
    finally:
        jax.monitoring.unregister_event_duration_listener(listener)
    report.seconds = time.monotonic() - start
    report.extra['ms_ours_plain_rss'] = '; '.join(f'{k} {v}' for k, v in ratios.items())
    return report
