"""Scenario 8: a DynamicBatcher whose callers give up at random while the others must all be answered right.

Worker threads send one-vector requests through one batcher in front of
``binary_densemm`` (a random backend per request), and each picks at random:

- a plain call, which must come back with the NumPy answer within the call bound;
- a request cancelled at once or after a random pause (a client that left);
- a call with a timeout of a millisecond or so (``TimeoutError`` or the right answer);
- a burst of ``call_async`` awaited under ``asyncio.wait_for`` with random timeouts;
- a request of the wrong length, which must fail alone with an error;
- a request to a model path that returns one row too few, which must fail with
  the batcher's error instead of stopping its worker.

Any answer that comes back must be right, and none may hang. At the end the
worker must still be alive, then :meth:`close` must stop it, and every
request that was not cancelled must be answered.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import functools
import time

import jax
import numpy as np

import eventjax as ej
from eventjax.serving import DynamicBatcher
from stress import operators as ops
from stress.harness import Report, run_threads, watched

M, N, MAX_BATCH = 16, 24, 4
CALL_BOUND_S = 60.0  # a request that is not answered within this is hung
ACTIONS = ('call', 'cancel', 'timeout', 'async_burst', 'wrong_length', 'short_answer')
WEIGHTS = (0.35, 0.2, 0.15, 0.15, 0.07, 0.08)


def model(weights):
    """``rows -> binary_densemm(W, rows.T).T``; the pretend backend ``'short'`` drops the last answer row."""
    products = _products()

    def fn(rows, backend=None):
        if backend == 'short':
            return np.asarray(products[None](weights, rows.T)).T[:-1]
        return products[backend](weights, rows.T).T

    return fn


@functools.cache
def _products() -> dict:
    # One jitted product per backend for the whole process, the weights an argument: every
    # model (the warm-up's and the scenario's) shares what they compile.
    return {b: jax.jit(functools.partial(ej.binary_densemm, backend=b)) for b in (None, *batch_backends())}


@functools.cache
def batch_backends() -> tuple[str, ...]:
    # warp compiles for minutes on a loaded machine: the scenario is about the batcher, not the kernels.
    return tuple(b for b in ops.backends('binary_densemm') if b in ('jax', 'numba'))


class Scenario:
    def __init__(self, report: Report, seed: int):
        rng = np.random.default_rng(seed)
        self.report = report
        self.weights = rng.normal(size=(M, N)).astype(np.float32)
        self.batcher = DynamicBatcher(model(self.weights), max_batch=MAX_BATCH, max_wait_s=0.002)
        for backend in (None, *batch_backends()):
            self.batcher.warmup(np.zeros(N, bool), [backend])
        self.counts = dict.fromkeys(('answered', 'cancelled', 'timed_out', 'errors_expected'), 0)

    def count(self, what: str, k: int = 1) -> None:
        with self.report.lock:
            self.counts[what] += k

    def request(self, rng):
        spikes = rng.random(N) < 0.3
        options = (None, *batch_backends())
        return spikes, options[int(rng.integers(len(options)))]

    def check(self, what: str, spikes, out) -> None:
        expected = self.weights.astype(np.float64) @ spikes
        got = np.asarray(out, np.float64)
        bad = got.shape != expected.shape or not np.allclose(got, expected, rtol=ops.RTOL, atol=ops.ATOL)
        self.report.add(0, 1, failure=bad and f'{what}: wrong answer (shape {got.shape})', wrong=bad)
        self.count('answered')

    def one(self, rng, who: str) -> None:
        action = ACTIONS[int(rng.choice(len(ACTIONS), p=WEIGHTS))]
        spikes, backend = self.request(rng)
        what = f'{who}: {action} backend={backend}'
        with watched(what):
            try:
                getattr(self, action)(rng, spikes, backend, what)
            except concurrent.futures.TimeoutError:
                self.report.add(0, 0, failure=f'{what}: no answer within {CALL_BOUND_S} s (hung)')
            except Exception as exc:
                self.report.add(0, 0, failure=f'{what}: raised {type(exc).__name__}: {exc}')
        self.report.add(1, 0)

    def call(self, rng, spikes, backend, what):
        self.check(what, spikes, self.batcher(spikes, backend, timeout=CALL_BOUND_S))

    def cancel(self, rng, spikes, backend, what):
        future = self.batcher.submit(spikes, backend)
        if rng.random() < 0.5:
            time.sleep(float(rng.random()) * 0.003)
        if future.cancel():
            self.count('cancelled')
        else:  # already running: the answer still comes, and must be right
            self.check(what, spikes, future.result(CALL_BOUND_S))

    def timeout(self, rng, spikes, backend, what):
        future = self.batcher.submit(spikes, backend)
        try:
            out = future.result(float(rng.random()) * 0.002)
        except concurrent.futures.TimeoutError:
            if future.cancel():
                self.count('timed_out')
                return
            out = future.result(CALL_BOUND_S)
        self.check(what, spikes, out)

    def async_burst(self, rng, spikes, backend, what):
        requests = [self.request(rng) for _ in range(int(rng.integers(2, 6)))]
        limits = [float(rng.random()) * 0.004 if rng.random() < 0.5 else CALL_BOUND_S for _ in requests]

        async def one(s, b, limit):
            try:
                return await asyncio.wait_for(self.batcher.call_async(s, b), limit)
            except TimeoutError:
                if limit >= CALL_BOUND_S:
                    raise concurrent.futures.TimeoutError from None
                return None

        async def burst():
            return await asyncio.gather(*(one(s, b, t) for (s, b), t in zip(requests, limits)))

        for (s, _), out in zip(requests, asyncio.run(burst())):
            if out is None:
                self.count('timed_out')
            else:
                self.check(what, s, out)

    def wrong_length(self, rng, spikes, backend, what):
        future = self.batcher.submit(np.ones(N + 1, bool), backend)
        try:
            future.result(CALL_BOUND_S)
        except concurrent.futures.TimeoutError:
            raise
        except Exception:  # the operator's shape error, whatever its type
            self.count('errors_expected')
            return
        self.report.add(0, 1, failure=f'{what}: a request of length {N + 1} was answered', wrong=True)

    def short_answer(self, rng, spikes, backend, what):
        future = self.batcher.submit(spikes, 'short')
        try:
            future.result(CALL_BOUND_S)
        except ValueError as exc:
            if 'one answer row per request' not in str(exc):
                raise
            self.count('errors_expected')
            return
        self.report.add(0, 1, failure=f'{what}: a batch answered with too few rows was accepted', wrong=True)

    def close(self) -> None:
        worker = self.batcher._worker
        if not worker.is_alive():
            self.report.add(0, 0, failure='the batcher worker died during the run')
        try:
            self.batcher.close(timeout=CALL_BOUND_S)
        except Exception as exc:
            self.report.add(0, 0, failure=f'close() raised {type(exc).__name__}: {exc}')
        if worker.is_alive():
            self.report.add(0, 0, failure=f'close() did not stop the worker within {CALL_BOUND_S} s')


def warm(report: Report, who: str = 'warm-up') -> None:
    """Compile every batch size on every backend (a batcher's own warm-up), then check one answer of each."""
    scenario = Scenario(report, 0)
    rng = np.random.default_rng(0)
    for backend in (None, *batch_backends()):
        spikes = rng.random(N) < 0.3
        what = f'{who}: dynamic_batcher backend={backend}'
        with watched(what):
            scenario.check(what, spikes, scenario.batcher(spikes, backend, timeout=CALL_BOUND_S))
    scenario.close()


def run(seconds: float, threads: int = 6, long: bool = False) -> Report:
    report = Report('dynamic_batcher')
    seed = int(time.time()) % 100_000 + 11
    start = time.monotonic()
    scenario = Scenario(report, seed)  # compiles every batch size first: the run itself is about the batcher
    deadline = time.monotonic() + max(seconds - (time.monotonic() - start), min(seconds, 5.0))

    def worker(i):
        rng = np.random.default_rng(seed + i)
        for _ in range(100_000):
            if time.monotonic() > deadline:
                break
            scenario.one(rng, f'worker {i}')

    report.failures.extend(run_threads(threads, worker, seconds + 2 * CALL_BOUND_S + 60))
    scenario.close()
    if not scenario.counts['answered']:
        report.add(0, 0, failure='no request was answered')
    report.seconds = time.monotonic() - start
    report.extra.update(seed=seed, batches=scenario.batcher.batches, **scenario.counts)
    return report
