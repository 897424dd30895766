"""Shared pieces of the stress scenarios: bounded loops, a watchdog, a report."""

from __future__ import annotations

import contextlib
import faulthandler
import os
import sys
import threading
import time
from collections.abc import Callable, Iterator

import attrs
import jax.monitoring


@attrs.define
class Report:
    """What one scenario did: counts and the failures it saw (must be empty)."""

    name: str
    calls: int = 0
    checks: int = 0
    wrong: int = 0
    failures: list[str] = attrs.field(factory=list)
    seconds: float = 0.0
    extra: dict = attrs.field(factory=dict)
    lock: threading.Lock = attrs.field(factory=threading.Lock, repr=False)

    def add(self, calls: int = 0, checks: int = 0, failure: str | None = None, wrong: bool = False) -> None:
        """Count calls and checks; ``failure`` fails the scenario, ``wrong`` marks a wrong result."""
        with self.lock:
            self.calls += calls
            self.checks += checks
            self.wrong += bool(wrong)
            if failure and len(self.failures) < 50:
                self.failures.append(failure)

    @property
    def ok(self) -> bool:
        # A scenario that checked nothing proved nothing: it fails, not passes.
        return not self.failures and self.checks > 0

    def line(self) -> str:
        rate = self.calls / self.seconds if self.seconds else 0.0
        status = 'ok' if self.ok else f'FAILED ({len(self.failures)})' if self.failures else 'FAILED (0 checks)'
        extra = ''.join(f', {k}={v}' for k, v in self.extra.items())
        return (f'{self.name}: {status}: {self.calls} calls, {self.checks} checks, '
                f'{self.wrong} wrong, {self.seconds:.1f} s, {rate:.0f} calls/s{extra}')


# JAX records one of these duration events per XLA compilation and per traced
# jaxpr (jax/_src/dispatch.py); counting them needs no timer.
COMPILE_EVENT = '/jax/core/compile/backend_compile_duration'
TRACE_EVENT = '/jax/core/compile/jaxpr_trace_duration'


class CompileCount:
    """Counts XLA compilations and jaxpr traces in the process while active, from JAX's monitoring events.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> with CompileCount() as count:
        ...     _ = jax.jit(lambda x: x * 3)(jnp.ones(2))
        >>> count.compiles >= 1
        True
    """

    def __init__(self) -> None:
        self.compiles = 0
        self.traces = 0
        self.compile_times: list[float] = []  # time.monotonic() of each compilation
        self._lock = threading.Lock()

    def _listen(self, event: str, duration: float, **kwargs) -> None:
        if event in (COMPILE_EVENT, TRACE_EVENT):
            with self._lock:
                if event == COMPILE_EVENT:
                    self.compiles += 1
                    self.compile_times.append(time.monotonic())
                else:
                    self.traces += 1

    def compiles_between(self, start: float, end: float = float('inf')) -> int:
        """Compilations between two ``time.monotonic()`` readings."""
        with self._lock:
            return sum(start <= t < end for t in self.compile_times)

    def __enter__(self) -> CompileCount:
        jax.monitoring.register_event_duration_secs_listener(self._listen)
        return self

    def __exit__(self, *exc) -> None:
        jax.monitoring.unregister_event_duration_listener(self._listen)


def rss_mib() -> float | None:
    """This process's resident set size in MiB (None without psutil, which the test extra installs)."""
    try:
        import psutil  # noqa: PLC0415  (the test extra)
    except ImportError:
        return None
    return psutil.Process().memory_info().rss / 2**20


class RssTrace:
    """Samples the resident set size every ``period`` seconds from a daemon thread while active.

    ``at(t)`` is the first sample taken ``t`` seconds or more after the start
    (the last one if the run was shorter); ``peak(t0, t1)`` the largest between.

    Example:
        >>> with RssTrace(period=0.01) as trace:
        ...     _ = bytearray(1 << 20)
        >>> trace.at(0.0) is None or trace.at(0.0) > 0
        True
    """

    def __init__(self, period: float = 0.5):
        self.period = period
        self.start = time.monotonic()
        self.samples: list[tuple[float, float]] = []
        self.marks: list[tuple[float, str]] = []  # (seconds, what starts then)
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._sample, name='RssTrace', daemon=True)

    def _take(self) -> None:
        rss = rss_mib()
        if rss is not None:
            self.samples.append((time.monotonic() - self.start, rss))

    def _sample(self) -> None:
        while not self._stop.wait(self.period):
            self._take()

    def __enter__(self) -> RssTrace:
        self.start = time.monotonic()
        self._take()
        self._thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        self._thread.join(5)
        self._take()

    def mark(self, what: str) -> None:
        """Name what runs from now on (the CSV's third column)."""
        self.marks.append((self.now(), what))

    def write_csv(self, path: str) -> None:
        with open(path, 'w') as f:
            f.write('seconds,rss_mib,scenario\n')
            for t, rss in self.samples:
                what = next((w for s, w in reversed(self.marks) if s <= t), '')
                f.write(f'{t:.1f},{rss:.1f},{what}\n')

    def now(self) -> float:
        return time.monotonic() - self.start

    def at(self, t: float) -> float | None:
        return next((r for s, r in self.samples if s >= t), self.samples[-1][1] if self.samples else None)

    def peak(self, t0: float, t1: float) -> float | None:
        inside = [r for s, r in self.samples if t0 <= s <= t1]
        return max(inside) if inside else None


def run_threads(n: int, target: Callable[[int], None], timeout: float) -> list[str]:
    """Run ``target(i)`` in ``n`` threads; return the errors they raised (as text)."""
    errors: list[str] = []

    def wrap(i: int) -> None:
        try:
            target(i)
        except BaseException as exc:  # the report must show it, whatever it is
            errors.append(f'thread {i}: {type(exc).__name__}: {exc}')

    threads = [threading.Thread(target=wrap, args=(i,), daemon=True) for i in range(n)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout
    for t in threads:
        t.join(max(0.0, deadline - time.monotonic()))
    stuck = [t.name for t in threads if t.is_alive()]
    if stuck:
        faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
        errors.append(f'threads still running after {timeout:.0f} s: {stuck}')
    return errors


class Watchdog:
    """Dump every thread's stack and exit if the whole run exceeds ``seconds``."""

    def __init__(self, seconds: float):
        self.seconds = seconds

    def __enter__(self):
        faulthandler.dump_traceback_later(self.seconds, exit=True)
        return self

    def __exit__(self, *exc):
        faulthandler.cancel_dump_traceback_later()
        return False


class CallWatch:
    """Fail the run if any one call takes longer than ``bound`` seconds.

    Workers wrap each call in :meth:`call`. A monitor thread looks at the
    calls in flight twice a second; when one is older than the bound it
    prints which, dumps every thread's stack with :mod:`faulthandler` and
    ends the process with exit code 70: a hung call cannot be cancelled, and
    CI must fail instead of hanging.
    """

    EXIT_CODE = 70

    def __init__(self, bound: float, period: float = 0.5):
        self.bound = bound
        self.period = period
        self._lock = threading.Lock()
        self._active: dict[int, tuple[float, str]] = {}
        self._tokens = iter(range(1 << 62))
        self.longest = 0.0
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._monitor, name='CallWatch', daemon=True)

    def __enter__(self):
        self._thread.start()
        return self

    def __exit__(self, *exc):
        self._stop.set()
        self._thread.join(5)
        return False

    @contextlib.contextmanager
    def call(self, what: str) -> Iterator[None]:
        start = time.monotonic()
        with self._lock:
            token = next(self._tokens)
            self._active[token] = (start, what)
        try:
            yield
        finally:
            took = time.monotonic() - start
            with self._lock:
                del self._active[token]
                self.longest = max(self.longest, took)

    def _monitor(self) -> None:
        while not self._stop.wait(self.period):
            now = time.monotonic()
            with self._lock:
                late = [(now - t, what) for t, what in self._active.values() if now - t > self.bound]
            if late:
                took, what = max(late)
                print(f'CallWatch: {what!r} has run for {took:.0f} s (bound {self.bound:.0f} s); '
                      'stacks of every thread follow.', file=sys.stderr, flush=True)
                faulthandler.dump_traceback(file=sys.stderr, all_threads=True)
                sys.stderr.flush()
                os._exit(self.EXIT_CODE)


class _Watching:
    """Which :class:`CallWatch` the scenarios report to (``__main__`` installs one)."""

    current = CallWatch(float('inf'))


def watched(what: str):
    """Context manager: this call is watched by the installed :class:`CallWatch`."""
    return _Watching.current.call(what)


def install_watch(watch: CallWatch) -> None:
    _Watching.current = watch
