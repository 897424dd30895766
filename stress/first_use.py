"""Scenario 11: many threads make a fresh process's first lookups of eventjax's names at once.

A multithreaded server's first requests may each be the process's first use
of an operator: ``import eventjax`` loads the operators and containers on
first lookup, so the threads import eventjax's modules together. Each fresh
process here starts ``THREADS`` threads behind a barrier, each looking up a
different name (names whose modules share packages, so their imports cross);
every lookup must give the object, never a ``_DeadlockError`` or an
``ImportError`` from a half-imported module. With ``slow`` each import of an
eventjax module first sleeps a little (a finder in front of the others), so
the threads interleave inside the imports in every process, not one in
twenty.

``python -m stress.first_use [--slow]`` is one such process (exit status 1
and the errors on a failure); :func:`fresh_processes` runs several.
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import threading
import time

from stress.harness import Report

THREADS = 12
# Names from every lazily loaded package, the containers (which import the kernels) among them.
NAMES = ('csr_on_pre', 'compact_events', 'binary_densemv', 'CSR', 'csrmv_dt2t', 'binary_fcnmv', 'jitcmv',
         'csr_delay_deliver', 'GradedEvents', 'binary_csrmv', 'dense_on_pre', 'cscmv_dt2t', 'JITCMatrix',
         'fcnmv', 'get_registry', 'XLACustomKernel')
PROCESS_TIMEOUT = 300.0
# The repository root, where ``python -m stress.first_use`` finds this module.
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


class _SlowFinder:
    """Finds nothing; sleeps before every eventjax module is looked up, so other threads run mid-import."""

    def find_spec(self, name, path=None, target=None):
        if name.startswith('eventjax.'):
            time.sleep(0.002)


def child(slow: bool, seed: int) -> int:
    """One fresh process: ``THREADS`` threads look up as many names of eventjax at once; 1 on any error."""
    if slow:
        sys.meta_path.insert(0, _SlowFinder())
    import eventjax as ej  # noqa: PLC0415

    names = random.Random(seed).sample(NAMES, THREADS)
    errors = []
    barrier = threading.Barrier(THREADS)

    def look_up(name):
        barrier.wait()
        try:
            if getattr(ej, name) is None:
                errors.append(f'{name}: None')
        except BaseException as e:  # noqa: BLE001 - every failure of a lookup is the finding
            errors.append(f'{name}: {type(e).__name__}: {e}')

    threads = [threading.Thread(target=look_up, args=(n,)) for n in names]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for line in errors:
        print(line)
    return 1 if errors else 0


def fresh_processes(count: int, slow: bool = True, seed: int = 0, timeout: float = PROCESS_TIMEOUT) -> list[str]:
    """Run ``count`` fresh processes of :func:`child`, two at a time; the failures, one line each."""
    failures = []
    for first in range(0, count, 2):
        started = []
        for i in range(first, min(first + 2, count)):
            command = [sys.executable, '-m', 'stress.first_use', '--seed', str(seed + i)] + (['--slow'] if slow else [])
            started.append(subprocess.Popen(command, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                            text=True))
        for process in started:
            try:
                out, _ = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                process.kill()
                process.communicate()
                failures.append(f'a process ran past {timeout:.0f} s (a deadlock)')
                continue
            if process.returncode:
                failures.append(f'exit {process.returncode}: ' + ' | '.join(out.strip().splitlines()[-3:]))
    return failures


def run(seconds: float, long: bool = False) -> Report:
    """Fresh processes until the budget is spent (at least two); every one must look up every name."""
    report = Report('first_use')
    start = time.monotonic()
    deadline = start + seconds
    seed = int(time.time()) % 100_000
    while True:
        failures = fresh_processes(2, slow=True, seed=seed + report.calls)
        report.add(calls=2, checks=2 * THREADS)
        for failure in failures:
            report.add(failure=failure, wrong=True)
        if time.monotonic() > deadline:
            report.seconds = time.monotonic() - start
            return report


if __name__ == '__main__':
    parser = argparse.ArgumentParser(prog='python -m stress.first_use', description=__doc__)
    parser.add_argument('--slow', action='store_true', help='sleep before each eventjax module is found')
    parser.add_argument('--seed', type=int, default=0, help='which names the threads look up')
    args = parser.parse_args()
    sys.exit(child(args.slow, args.seed))
