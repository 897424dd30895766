"""Scenario 6: repeated calls over warmed shapes grow neither FFI targets nor memory.

A fixed set of operator cases is called once per (backend, eager/jit) to
warm every cache; then four threads make ``CALLS`` more calls over the same
cases. The numba bridge's FFI target count must not grow at all, and the
resident set size (psutil) may grow by at most ``RSS_BOUND_MIB``. The
per-call watch installed by ``__main__`` bounds each call's time.
"""

from __future__ import annotations

import time

import numpy as np

from stress import mixed
from stress import operators as ops
from stress.harness import Report, rss_mib, run_threads

CALLS = 10_000
RSS_BOUND_MIB = 64.0
TARGET_GROWTH_BOUND = 0


def _target_count() -> int | None:
    if 'numba' not in ops.usable_cpu_backends():
        return None
    from eventjax.backends.numba import bridge as numba_bridge  # noqa: PLC0415

    return numba_bridge.target_count()


def run(seconds: float, threads: int = 4, long: bool = False) -> Report:
    report = Report('resources')
    seed = int(time.time()) % 100_000 + 3
    rng = np.random.default_rng(seed)
    names = ops.operators()
    # The long run calls the pool scenario 1 compiled: what is measured is repeat calls, not compiles.
    pool = list(mixed.long_pool(mixed.LONG_SEED)) if long else [ops.random_case(rng, name) for name in names[::2]]
    start = time.monotonic()
    mixed.warm(report, pool)
    mixed.warm(report, pool)  # a second pass: anything lazily built on the first call is built now
    targets_before, rss_before = _target_count(), rss_mib()
    budget = max(seconds, 30.0 if long else 15.0)
    deadline = time.monotonic() + budget
    done, rounds, worst = 0, 0, (0, 0.0)
    # Short mode makes one round of CALLS; long mode repeats rounds until its time is spent.
    while rounds == 0 or (long and time.monotonic() < deadline - 5.0):
        counts = [0] * threads

        def worker(i, counts=counts, rounds=rounds):
            share = CALLS // threads + (i < CALLS % threads)
            counts[i] = mixed.hammer(report, pool, seed + 7 * rounds + i, deadline, share,
                                     who=f'resources {rounds}.{i}')

        report.failures.extend(run_threads(threads, worker, budget + 300))
        done += sum(counts)
        rounds += 1
        targets, rss = _target_count(), rss_mib()
        growth = (0 if targets is None else targets - targets_before, rss - rss_before)
        worst = max(worst, growth)
        if growth[0] > TARGET_GROWTH_BOUND:
            report.add(failure=f'numba FFI targets grew from {targets_before} to {targets} '
                               f'over {done} calls on warmed shapes')
        if growth[1] > RSS_BOUND_MIB:
            report.add(failure=f'RSS grew by {growth[1]:.0f} MiB over {done} calls on warmed shapes '
                               f'(bound {RSS_BOUND_MIB:.0f} MiB)')
        if growth[0] > TARGET_GROWTH_BOUND or growth[1] > RSS_BOUND_MIB or sum(counts) < CALLS:
            break
    report.seconds = time.monotonic() - start
    report.extra['repeat_calls'] = done
    report.extra['rounds'] = rounds
    report.extra['targets'] = f'{targets_before}->{_target_count()}'
    report.extra['rss_mib'] = f'{rss_before:.0f}->{rss_mib():.0f} (bound +{RSS_BOUND_MIB:.0f})'
    if done < CALLS:
        report.extra['note'] = f'time ran out after {done} of {CALLS} calls'
    return report
