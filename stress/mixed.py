"""Scenario 1: eight workers make random standard-kernel calls, each checked against NumPy.

Each call picks an operator case from a pool (dense, CSR, FCN; mv and mm;
binary and float; shapes from a small set), a backend among those the cpu
has (or None: the default), and eager or jitted, from the pool's key set
(:func:`key_set`): every case on every backend choice, half of those pairs
under ``jit`` and half eagerly, so every operator and every backend runs
both ways while the executables a pool compiles are halved. Which half is
jitted turns with the run's seed (``PARITY``), so over runs every
(operator, backend, mode) is called. The workers start together
on a cold pool, so they compile its code concurrently (in long mode the
run's warm-up has compiled the pool before, see ``stress/README.md``, and
the workers run warm code from the start); in long mode they also redraw
a case's values now and then (same shapes and dtypes), so new data keeps
flowing through warm code, and nothing compiles once the pool is warm: a
long run's memory is paid early. Afterwards the same pool, warmed, measures throughput with 1, 2, 4 and 8 threads.

Pallas is left out: the standard kernels have no pallas cpu kernel, and
interpret mode (tens of ms a call) would only measure the interpreter.
"""

from __future__ import annotations

import functools
import threading
import time

import numpy as np

from stress import operators as ops
from stress.harness import Report, run_threads, watched

THREAD_COUNTS = (1, 2, 4, 8)
# The long run's shared pool is drawn once per process from this seed (the run prints it).
LONG_SEED = int(time.time()) % 100_000
# Which half of every pool's (case, backend) pairs runs under jit: see key_set.
PARITY = LONG_SEED % 2


def make_pool(rng: np.random.Generator, size: int) -> list[ops.Case]:
    names = ops.operators()
    return [ops.random_case(rng, names[int(rng.integers(len(names)))]) for _ in range(size)]


@functools.cache
def long_pool(seed: int) -> tuple[ops.Case, ...]:
    """One case of every operator: the long run's pool, shared by the scenarios that call operators.

    Scenarios after ``mixed`` run the code it compiled (``resources``, the
    healthy workers of ``faults``), with values redrawn where they need new
    data, so the long run compiles this pool's code once.
    """
    rng = np.random.default_rng(seed)
    return tuple(ops.random_case(rng, name) for name in ops.operators())


def choices(case: ops.Case) -> tuple:
    return (None, *ops.backends(case.name))


def key_set(pool) -> tuple[tuple[int, object, bool], ...]:
    """The ``(case index, backend, jit)`` calls made over ``pool``: each case on each backend choice once.

    Backend choice ``j`` of case ``i`` runs under ``jit`` when ``i + j +
    PARITY`` is odd: every case has both eager and jitted calls, and so has
    every backend (the pool's cases alternate), at half the executables of
    calling each pair both ways. Each call is its own executable kept by JAX
    (see ``stress/README.md``), so this set bounds what a pool compiles.
    """
    return tuple((i, backend, (i + j + PARITY) % 2 == 1)
                 for i, case in enumerate(pool) for j, backend in enumerate(choices(case)))


def call_and_check(report: Report, case: ops.Case, backend, jit: bool, who: str) -> bool:
    """One watched call; records the check (or the exception) in ``report``."""
    what = f'{who}: {case.name} {case.statics} backend={backend} jit={jit}'
    try:
        with watched(what):
            result = np.asarray(case.call(backend, jit=jit))
    except Exception as exc:
        report.add(1, 0, failure=f'{what}: raised {type(exc).__name__}: {exc}')
        return False
    problem = case.check(result)
    report.add(1, 1, failure=problem and f'{what}: {problem}', wrong=problem is not None)
    return problem is None


def hammer(report: Report, pool, seed: int, deadline: float, max_calls: int,
           fresh: float = 0.0, stop: threading.Event | None = None, who: str = 'worker') -> int:
    """Random calls from ``pool`` until the deadline, ``max_calls`` or ``stop``; returns the count."""
    rng = np.random.default_rng(seed)
    keys = key_set(pool)
    n = 0
    while n < max_calls and time.monotonic() < deadline and not (stop and stop.is_set()):
        index, backend, jit = keys[int(rng.integers(len(keys)))]
        case = pool[index]
        if fresh and rng.random() < fresh:
            case = ops.redraw(rng, case)
        call_and_check(report, case, backend, jit, who)
        n += 1
    return n


def warm(report: Report, pool) -> None:
    """Call every member of ``pool``'s key set once, in this thread."""
    for index, backend, jit in key_set(pool):
        call_and_check(report, pool[index], backend, jit, 'warm-up')


def throughput(report: Report, pool, seconds_each: float, seed: int) -> dict[int, float]:
    """Calls per second of ``hammer`` over a warmed ``pool`` with 1, 2, 4 and 8 threads."""
    warm(report, pool)
    rates = {}
    for n in THREAD_COUNTS:
        counts = [0] * n
        deadline = time.monotonic() + seconds_each
        start = time.monotonic()

        def worker(i, counts=counts, deadline=deadline, n=n):
            counts[i] = hammer(report, pool, seed + 1000 * n + i, deadline, 10**7, who=f'throughput x{n}')

        report.failures.extend(run_threads(n, worker, seconds_each + 120))
        rates[n] = sum(counts) / (time.monotonic() - start)
    return rates


def run(seconds: float, threads: int = 8, long: bool = False) -> Report:
    report = Report('mixed')
    seed = int(time.time()) % 100_000
    pool = list(long_pool(LONG_SEED)) if long else make_pool(np.random.default_rng(seed), 6)
    start = time.monotonic()
    measure = min(max(seconds * 0.25, 4.0), 60.0)
    deadline = start + max(seconds - measure - 2.0, 2.0)

    def worker(i):
        hammer(report, pool, seed + i, deadline, 200_000, fresh=0.02 if long else 0.0, who=f'worker {i}')

    report.failures.extend(run_threads(threads, worker, seconds + 300))
    rates = throughput(report, pool[:4] if long else pool[:2], measure / len(THREAD_COUNTS), seed)
    report.seconds = time.monotonic() - start
    report.extra['seed'] = LONG_SEED if long else seed
    report.extra['throughput'] = ' '.join(f'{n}t:{r:.0f}/s' for n, r in rates.items())
    return report
