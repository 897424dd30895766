"""Scenario 3: ``set_backend`` and ``set_default`` flip while workers call, some inside ``override``.

The instrument is a primitive whose cpu backends ``a``, ``b``, ``c`` return
``x + 1``, ``x + 2``, ``x + 3``. A flipper thread applies changes
``k = 1, 2, ...``: odd ones ``set_backend('cpu', ...)`` cycling through
None, 'a', 'b' and 'warp' (a backend the instrument lacks, so it is skipped),
even ones ``set_default('cpu', ...)`` cycling through 'a', 'b', 'c'. The
state after change ``k`` is known in advance, hence the backend a plain call
must use. Before change ``k`` the flipper publishes ``started = k``, after it
``committed = k``; a worker reads ``committed`` before its call and
``started`` after it, and the value must be that of a state in
``committed..started``: current at some moment during the call, and never
older than a change that finished before the call began.

Workers: plain eager and jitted calls; calls inside ``override(cpu='c')``
(always 3) and ``override(cpu='warp')`` (skipped: the global rule applies);
per-call ``backend='b'`` (always 2); and standard operators without
``backend=``, whose backend follows the flips ('warp' is a backend they have),
checked against NumPy.

The first ``PERIOD`` changes (every distinct state once) are cold: workers
trace and compile while the flipper changes the configuration, the race
that keys by content must survive. After them the flipper works like an
operator of a serving process: it drafts the next state
(``config.drafting``), compiles every worker's call for it in its own thread
(``config.warming``), then applies it; workers call the instrument only
(the standard operators, slow to compile, take part in the cold pass). The
third pass waits until no cold-pass call is left (a late trace dirties the
keys of the states it saw change, and the third pass replaces them); from
the fourth pass on, every state has been seen before, and the scenario
reports what those changes cost:
``rss_per_change_kib`` and ``compiles_seen_before`` (JAX's monitoring
events), both near 0.

The cold pass compiles each pooled operator under every state it meets (a
fresh key per state is the point of the race), so the pool sets most of
this scenario's compiles and memory. The short mode pools the first four
operators; the long mode, whose memory must settle within its first minute,
pools two drawn at random: the race (operators following the flips, checked
against NumPy) is the same with two, and over many runs every operator
takes part. A long run makes the cold pass alone before its warm-up
(:func:`cold_first`), and its warm-up drafts every state and compiles the
workers' calls under it (:func:`warm`); the scenario's own turn
(``cold=0``) then warms each change before making it from the first one,
and measures from its second pass, when every state has been current
before.
"""

from __future__ import annotations

import functools
import threading
import time

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej
from stress import operators as ops
from stress.harness import CompileCount, Report, rss_mib, run_threads, watched

VALUES = {'a': 1.0, 'b': 2.0, 'c': 3.0}
GLOBALS = (None, 'a', 'b', 'warp')
DEFAULTS = ('a', 'b', 'c')
KINDS = ('eager', 'jit', 'override_c', 'override_skipped', 'per_call', 'operator')
# The states repeat every PERIOD changes: the global backend cycles over 4 values on odd
# changes, the default over 3 on even ones.
PERIOD = 24


@functools.cache
def make_primitive() -> ej.XLACustomKernel:
    prim = ej.XLACustomKernel('stress_three_valued')
    for name, value in VALUES.items():
        prim.def_kernel(name, 'cpu', lambda outs, value=value: lambda x: (x + value,))
    prim.set_default('cpu', 'a')
    return prim


def primitives() -> tuple:
    """The primitives this scenario defines, for ``python -m stress`` to define before any scenario runs."""
    return (make_primitive(),)


def states(flips: int) -> list[tuple[str | None, str]]:
    """``(global backend, primitive default)`` after each change ``0..flips``."""
    out = [(None, 'a')]
    for k in range(1, flips + 1):
        glob, default = out[-1]
        if k % 2:
            glob = GLOBALS[(k // 2 + 1) % len(GLOBALS)]
        else:
            default = DEFAULTS[(k // 2) % len(DEFAULTS)]
        out.append((glob, default))
    return out


def apply(prim, state) -> None:
    glob, default = state
    ej.set_backend('cpu', glob)
    prim.set_default('cpu', default)


def plain_value(state) -> float:
    glob, default = state
    return VALUES[glob if glob in VALUES else default]


@functools.cache
def instrument_calls() -> tuple:
    """``(prim, x, out, jitted)``: the instrument's operand and its jitted call, built once per process.

    The warm-up (:func:`warm`) and :func:`run` must compile and call the same
    jitted function for the warm-up's executables to be the scenario's.
    """
    prim = make_primitive()
    x = jnp.zeros(4, jnp.float32)
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return prim, x, out, jax.jit(lambda x: prim(x, outs=out))


def instrument(kind: str) -> tuple[float, set | None]:
    """One call of the instrument of ``kind``: its value, and the values allowed whatever the state (or None)."""
    prim, x, out, jitted = instrument_calls()
    if kind == 'eager':
        return float(np.asarray(prim(x, outs=out))[0]), None
    if kind == 'jit':
        return float(np.asarray(jitted(x))[0]), None
    if kind == 'override_c':
        with ej.config.override(cpu='c'):
            return float(np.asarray(jitted(x))[0]), {3.0}
    if kind == 'override_skipped':
        with ej.config.override(cpu='warp'):
            return float(np.asarray(prim(x, outs=out))[0]), None
    return float(np.asarray(prim(x, outs=out, backend='b'))[0]), {2.0}


def warm_all() -> None:
    """Every call a worker makes after the cold pass, once, so no worker compiles after the switch."""
    for kind in KINDS[:-1]:
        instrument(kind)


def warm(report: Report, who: str = 'warm-up') -> None:
    """Draft every state of the cycle and compile the workers' calls under it, checked, publishing none.

    The keys the drafts reserve were never current, so no racing trace can
    make them dirty (see the concurrency guide); :func:`run` with
    ``cold=False`` then switches to each of them without compiling.
    """
    prim = make_primitive()
    for state in dict.fromkeys(states(PERIOD)):
        with ej.config.drafting() as draft:
            apply(prim, state)
        with ej.config.warming(draft.snapshot):
            for kind in KINDS[:-1]:
                value, allowed = instrument(kind)
                allowed = {plain_value(state)} if allowed is None else allowed
                bad = value not in allowed
                report.add(1, 1, wrong=bad, failure=bad and (
                    f'{who}: config_load {kind} under {state}: got {value}, allowed {sorted(allowed)}'))


def cold_first(threads: int = 8) -> Report:
    """The cold pass alone, briefly: a long run makes it before its warm-up (see ``stress/README.md``)."""
    return run(PERIOD * 0.05, flips=PERIOD, threads=threads, long=True, name='config_load_cold')


def run(seconds: float, flips: int | None = None, threads: int = 8, long: bool = False, cold: int = 1,
        name: str = 'config_load') -> Report:
    """Changes ``k = 1, 2, ...`` under load within about ``seconds``, checked; see the module docstring.

    ``cold=0`` leaves out the cold pass (a long run made it first, and
    its warm-up warmed every state): every change is warmed, and every state
    reached has been compiled before. ``flips=PERIOD`` makes the cold pass
    only.
    """
    report = Report(name)
    prim, x, out, jitted = instrument_calls()
    apply(prim, (None, 'a'))  # state 0
    # At least four passes: cold, warmed, and two over states seen before to measure;
    # or the cold pass alone.
    only_cold = flips == PERIOD and cold
    flips = flips if only_cold else max(flips or (2000 if long else 120), 4 * PERIOD)
    table = states(flips)
    rng = np.random.default_rng(int(time.time()) % 100_000)
    names = ops.operators()
    if long:  # two operators drawn at random: see the module docstring
        pool = [ops.random_case(rng, str(name)) for name in rng.choice(names, size=min(2, len(names)), replace=False)]
    else:
        pool = [ops.random_case(rng, names[i % len(names)]) for i in range(4)]
    marks = {'started': 0, 'committed': 0}
    stop = threading.Event()
    deadline = time.monotonic() + seconds
    ej.clear_backends()

    cold_calls = threading.Condition()  # .n: operator calls of the cold pass still running
    cold_calls.n = 0

    def worker(i):
        local = np.random.default_rng(i)
        while not stop.is_set() and time.monotonic() < deadline + 600:
            kind = KINDS[i % len(KINDS)] if local.random() < 0.7 else KINDS[int(local.integers(len(KINDS)))]
            if kind == 'operator' and (not cold or marks['committed'] > PERIOD):
                kind = KINDS[i % (len(KINDS) - 1)]  # the warmed passes time the instrument only
            first = marks['committed']
            what = f'worker {i}: {kind}'
            try:
                with watched(what):
                    if kind == 'operator':
                        case = pool[int(local.integers(len(pool)))]
                        with cold_calls:
                            cold_calls.n += 1
                        try:
                            problem = case.check(case.call(jit=bool(local.integers(2))))
                        finally:
                            with cold_calls:
                                cold_calls.n -= 1
                                cold_calls.notify_all()
                        report.add(1, 1, failure=problem and f'{what}: {problem}', wrong=problem is not None)
                        continue
                    value, allowed = instrument(kind)
            except Exception as exc:
                report.add(1, 0, failure=f'{what}: raised {type(exc).__name__}: {exc}')
                continue
            last = marks['started']
            if allowed is None:
                allowed = {plain_value(table[k]) for k in range(first, last + 1)}
            bad = value not in allowed
            report.add(1, 1, wrong=bad, failure=bad and (
                f'{what}: got {value}, changes {first}..{last} allow {sorted(allowed)}'))

    pool_thread = threading.Thread(
        target=lambda: report.failures.extend(run_threads(threads, worker, seconds + 300)))
    start = time.monotonic()
    pool_thread.start()
    pause = max(seconds / (flips + 1), 0.002)
    done = 0
    # Without the cold pass, every state from the second pass on has been current before.
    measured_from = 3 * PERIOD if cold else PERIOD
    rss_mark = None
    count = CompileCount()
    for k in range(1, flips + 1):
        if time.monotonic() > deadline and k > measured_from + PERIOD:
            break
        time.sleep(pause)
        if cold and k == measured_from - PERIOD + 1:
            # A cold-pass call still tracing dirties the keys of the states it sees change; once
            # none is left, the next pass gives those states fresh keys and the measured pass
            # after it finds every key it needs.
            with cold_calls:
                cold_calls.wait_for(lambda: cold_calls.n == 0, timeout=600)
        if k > PERIOD or not cold:
            with ej.config.drafting() as draft:
                apply(prim, table[k])
            with ej.config.warming(draft.snapshot):
                warm_all()
        if k == measured_from + 1:
            rss_mark = rss_mib()
            count.__enter__()
        marks['started'] = k
        apply(prim, table[k])
        marks['committed'] = k
        done = k
    stop.set()
    pool_thread.join(seconds + 400)
    if rss_mark is not None:
        count.__exit__(None, None, None)
    report.seconds = time.monotonic() - start
    report.extra['changes'] = done
    stats = ej.config.configuration_stats()
    report.extra['keys_made'] = stats.keys_made
    if rss_mark is not None and done > measured_from:
        # Changes to states seen before, each warmed before the switch: no new memory, no compile.
        report.extra['rss_per_change_kib'] = round(1024 * (rss_mib() - rss_mark) / (done - measured_from))
        report.extra['compiles_seen_before'] = count.compiles
    apply(prim, (None, 'a'))  # back to state 0: the configuration the run had before
    return report
