"""Shared pieces of the stress scenarios: bounded loops, a watchdog, a report."""

from __future__ import annotations

import faulthandler
import sys
import threading
import time
from collections.abc import Callable

import attrs


@attrs.define
class Report:
    """What one scenario did: counts and the failures it saw (must be empty)."""

    name: str
    calls: int = 0
    checks: int = 0
    failures: list[str] = attrs.field(factory=list)
    seconds: float = 0.0
    extra: dict = attrs.field(factory=dict)
    lock: threading.Lock = attrs.field(factory=threading.Lock, repr=False)

    def add(self, calls: int = 0, checks: int = 0, failure: str | None = None) -> None:
        with self.lock:
            self.calls += calls
            self.checks += checks
            if failure is not None and len(self.failures) < 50:
                self.failures.append(failure)

    @property
    def ok(self) -> bool:
        return not self.failures

    def line(self) -> str:
        rate = self.calls / self.seconds if self.seconds else 0.0
        status = 'ok' if self.ok else f'FAILED ({len(self.failures)})'
        extra = ''.join(f', {k}={v}' for k, v in self.extra.items())
        return (f'{self.name}: {status}: {self.calls} calls, {self.checks} checks, '
                f'{self.seconds:.1f} s, {rate:.0f} calls/s{extra}')


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
