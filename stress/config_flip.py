"""Workers call a two-valued primitive while the main thread flips set_backend.

Each call must return the value of a backend that was current at some moment
during the call, and a call that starts after ``set_backend`` returned must
use the new backend. Flip ``k`` sets backend ``BACKENDS[k % 2]``; before a
flip the main thread publishes ``started = k``, after it ``committed = k``.
A worker reads ``committed`` before its call and ``started`` after it: the
backends allowed are those of flips ``committed..started``.

The first ``COLD_FLIPS`` flips are cold: workers trace and compile while the
configuration changes under them, and every trace that races a change costs
fresh keys, so each of these flips compiles. A long run makes them first,
before its warm-up (:func:`cold_first`), so what they keep is paid in its
first minute, and its ``config_flip`` then makes warmed flips only. The later flips work like a
serving process: the flipper drafts the next state and compiles the workers'
calls for it in its own thread (``config.drafting``, ``config.warming``)
before switching, so they compile nothing and keep no new memory.
"""

from __future__ import annotations

import functools
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej
from stress.harness import Report, run_threads

VALUES = {'a': 1.0, 'b': 2.0}
BACKENDS = ('a', 'b')
COLD_FLIPS = 24


@functools.cache
def make_primitive() -> ej.XLACustomKernel:
    prim = ej.XLACustomKernel('stress_two_valued')
    for name, value in VALUES.items():
        prim.def_kernel(name, 'cpu', lambda outs, value=value: lambda x: (x + value,))
    return prim


def primitives() -> tuple:
    """The primitives this scenario defines, for ``python -m stress`` to define before any scenario runs."""
    return (make_primitive(),)


def run(seconds: float, flips: int = 200, threads: int = 8, cold: int = COLD_FLIPS,
        name: str = 'config_flip') -> Report:
    """``flips`` flips within about ``seconds`` (the first ``cold`` of them cold, always made), checked."""
    report = Report(name)
    prim = make_primitive()
    x = jnp.zeros(4, jnp.float32)
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    jitted = jax.jit(lambda x: prim(x, outs=out))
    eager = lambda x: prim(x, outs=out)
    ej.set_backend('cpu', 'a')
    marks = {'started': 0, 'committed': 0, 'stop': False}

    def worker(i: int) -> None:
        fn = jitted if i % 2 else eager
        while not marks['stop']:
            first = marks['committed']
            value = float(np.asarray(fn(x))[0])
            last = marks['started']
            allowed = {VALUES[BACKENDS[k % 2]] for k in range(first, last + 1)}
            if value not in allowed:
                report.add(1, 1, f'worker {i}: got {value}, flips {first}..{last} allow {sorted(allowed)}')
            else:
                report.add(1, 1)

    def warm():
        np.asarray(jitted(x))
        np.asarray(eager(x))

    flip_while_working(report, worker, marks, BACKENDS, seconds=seconds, flips=flips, threads=threads,
                       warm=warm, cold=cold)
    return report


def cold_first(threads: int = 8) -> Report:
    """The cold flips alone, briefly: a long run makes them before its warm-up (see ``stress/README.md``).

    Each cold flip compiles under keys that are never current again, so a long
    run pays for them in its first minute, before anything else compiles;
    its ``config_flip`` then makes warmed flips only (``cold=0``).
    """
    return run(COLD_FLIPS * 0.1, flips=COLD_FLIPS, threads=threads, cold=COLD_FLIPS, name='config_flip_cold')


def flip_while_working(report: Report, worker, marks: dict, backends: tuple[str, str], *, seconds: float,
                       flips: int, threads: int, warm=None, cold: int = 0) -> None:
    """Run ``worker`` in ``threads`` threads while flip ``k`` sets ``backends[k % 2]`` on the cpu.

    Before flip ``k`` ``marks['started']`` becomes ``k``, after it ``marks['committed']``;
    ``marks['stop']`` ends the workers. The first ``cold`` flips are always made; after
    them ``warm()`` runs under the next state (drafted, not yet published) before each
    flip, and no flip starts after ``seconds``. Fills the report's time and flip count,
    clears the backends.
    """
    deadline = time.monotonic() + seconds
    pool = threading.Thread(target=lambda: report.failures.extend(run_threads(threads, worker, seconds + 600)))
    start = time.monotonic()
    pool.start()
    pause = max(seconds / (flips + 1), 0.001)
    try:
        for k in range(1, flips + 1):
            if time.monotonic() > deadline and k > cold:
                break
            time.sleep(pause)
            if warm is not None and k > cold:
                with ej.config.drafting() as draft:
                    ej.set_backend('cpu', backends[k % 2])
                with ej.config.warming(draft.snapshot):
                    warm()
            marks['started'] = k
            ej.set_backend('cpu', backends[k % 2])
            marks['committed'] = k
    finally:
        marks['stop'] = True
    pool.join(seconds + 660)
    report.seconds = time.monotonic() - start
    report.extra['flips'] = marks['committed']
    ej.clear_backends()
