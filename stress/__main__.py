"""Run the stress scenarios: ``python -m stress --mode short|long [--seconds N] [--only ...]``."""

from __future__ import annotations

import argparse
import importlib
import inspect
import json
import os
import subprocess
import sys
import tempfile
import threading
import time

import eventjax as ej
from stress.harness import CallWatch, CompileCount, Report, RssTrace, Watchdog, install_watch, rss_mib, run_threads

# name -> share of the time budget; each is a module ``stress.<name>`` with ``run(seconds, long=...)``.
SCENARIOS = {
    'config_flip': 0.10,
    'mixed': 0.30,
    'batching': 0.12,
    'config_load': 0.15,
    'faults': 0.10,
    'prange': 0.08,
    'resources': 0.15,
    'differential': 0.10,
    'cpp_kernel': 0.06,
    'dynamic_batcher': 0.06,
    'config_cycle': 0.08,
    'eager_vmap': 0.05,
    'first_use': 0.04,
}
# The long mode's order. After the cold changes (``COLD_FIRST``) and the warm-up
# (``WARM``) come the scenarios that call under the process's initial
# configuration, on the code the warm-up compiled; the ones that change the
# global configuration while threads may trace come last. Their traces make
# the initial configuration's key dirty (the race rule of the concurrency
# guide): run first, they would leave every executable the warm-up compiled
# unreachable, kept by JAX, and compiled a second time.
# ``config_cycle`` comes first of those: its flips trace nothing (it checks
# that), so they dirty no key, and the keys its warm-up drafts are still in
# the configuration table, which ``config_load``'s many states would churn.
LONG_ORDER = ('mixed', 'batching', 'faults', 'eager_vmap', 'prange', 'dynamic_batcher', 'resources',
              'config_cycle', 'config_flip', 'config_load', 'cpp_kernel', 'first_use', 'differential')
# The long mode runs these in a process of their own: every problem the
# differential tester draws has new shapes, so new executables that JAX keeps
# (up to its caches' entry limits); that growth is its own, reported apart.
APART = ('differential',)
# A long run of 2 minutes or more starts with a warm-up: these scenarios' bounded key
# sets, each called once, every result checked. Their memory is then paid within the
# first minute instead of when the timed mix reaches them. One thread per core takes
# the next scenario from this list, longest first: compiles release the GIL, so every
# core compiles, while more threads than cores only fight over the GIL (on 2 cores, 6
# threads took 71 s where one thread took 44 s). ``config_cycle`` warms its two
# configurations as drafts, published later.
WARM = ('batching', 'config_cycle', 'mixed', 'config_load', 'eager_vmap', 'dynamic_batcher', 'prange')
# Before the warm-up, a long run of 2 minutes or more makes these scenarios' cold changes
# (``cold_first()``: the race the content keys must survive): every trace that races a
# change leaves executables under keys never current again, a bounded cost the first
# minute should hold; made at the scenario's turn, it would grow memory after it. They
# make the initial configuration's key dirty too, so they come before anything else
# compiles, and the scenario's own turn (``cold=0``) makes warmed changes only;
# ``config_load``'s warm-up drafts and compiles its states for it.
COLD_FIRST = ('config_flip', 'config_load')
DEFAULT_SECONDS = {'short': 45.0, 'long': 180.0}
# One call (compilation included, on a loaded 2-core machine) may take this long.
CALL_BOUND = {'short': 120.0, 'long': 180.0}
# A long run's memory when its warm-up ends (after its first minute if it has none) must be within
# this fraction of its memory at the end. A fixed second would fall inside a warm-up slowed by a
# loaded machine and count the rest of the warm-up's compiles as growth.
RSS_MINUTE = 60.0
RSS_TOLERANCE = 0.20


def _run_apart(name: str, budget: float, args) -> Report:
    """Run scenario ``name`` in a child ``python -m stress`` and read its report back."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, 'report.json')
        command = [sys.executable, '-m', 'stress', '--mode', args.mode, '--only', name,
                   '--seconds', str(budget), '--report-json', path]
        if args.diff_examples:
            command += ['--diff-examples', str(args.diff_examples)]
        if args.call_bound:
            command += ['--call-bound', str(args.call_bound)]
        try:
            done = subprocess.run(command, timeout=budget * 3 + 600, check=False)
        except subprocess.TimeoutExpired:
            return Report(name, failures=[f'its process ran past {budget * 3 + 600:.0f} s'])
        if not os.path.exists(path):
            return Report(name, failures=[f'its process ended with code {done.returncode} and no report'])
        with open(path) as f:
            (saved,) = json.load(f)
    report = Report(**saved)
    report.extra['process'] = 'own'
    return report


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog='python -m stress', description=__doc__)
    parser.add_argument('--mode', choices=('short', 'long'), default='short')
    parser.add_argument('--seconds', type=float, default=None,
                        help='total time budget (default: 45 short, 180 long)')
    parser.add_argument('--call-bound', type=float, default=None,
                        help='fail the run if one call takes longer (seconds)')
    parser.add_argument('--only', nargs='*', choices=sorted(SCENARIOS), default=None)
    parser.add_argument('--diff-examples', type=int, default=None,
                        help='problems the differential scenario draws at most (default: 1 short, 400 long)')
    parser.add_argument('--diff-seconds', type=float, default=None,
                        help="the differential scenario's own time bound (default: its share of --seconds)")
    parser.add_argument('--rss-log', default=None,
                        help='write the RSS samples (seconds, MiB, scenario) to this CSV file')
    parser.add_argument('--report-json', default=None, help=argparse.SUPPRESS)  # a child run's reports
    args = parser.parse_args(argv)
    total = args.seconds or DEFAULT_SECONDS[args.mode]
    long = args.mode == 'long'
    names = args.only or list(LONG_ORDER if long else SCENARIOS)
    shares = sum(SCENARIOS[n] for n in names)
    reports = []
    start = time.monotonic()
    watch = CallWatch(args.call_bound or CALL_BOUND[args.mode])
    install_watch(watch)
    budgets = {n: total * SCENARIOS[n] / shares for n in names}
    if 'differential' in budgets and args.diff_seconds:
        budgets['differential'] = args.diff_seconds
    apart = long and len(names) > 1
    # Every primitive first, as a serving process defines its own at start-up: defining one
    # changes the configuration, so everything compiled before it would compile again.
    for name in names:
        if not (apart and name in APART):
            define = getattr(importlib.import_module(f'stress.{name}'), 'primitives', None)
            if define is not None:
                define()
    compiles = CompileCount()
    with Watchdog(sum(budgets.values()) * 3 + 600), watch, RssTrace() as trace, compiles:
        warming = [n for n in WARM if n in names] if long and total >= 2 * RSS_MINUTE else []
        cold_first = [n for n in COLD_FIRST if n in names] if warming else []
        for name in cold_first:
            reports.append(_cold_first(name, trace, compiles, args.report_json))
        settled = None
        if warming:
            reports.append(_warm_up(warming, trace, compiles, args.report_json))
            settled = trace.now()
        for name in names:
            before, began, keys = rss_mib(), time.monotonic(), _keys_made()
            trace.mark(name)
            budget = budgets[name]
            if apart and name in APART:
                report = _run_apart(name, budget, args)
            else:
                module = importlib.import_module(f'stress.{name}')
                accepts = inspect.signature(module.run).parameters
                kwargs = {'long': long} if 'long' in accepts else {}
                if 'examples' in accepts:
                    kwargs['examples'] = args.diff_examples
                if name in cold_first:
                    kwargs['cold'] = 0
                report = module.run(seconds=budget, **kwargs)
            after = rss_mib()
            if before is not None and report.extra.get('process') != 'own':
                report.extra['rss_mib'] = f'{before:.0f}->{after:.0f} ({after - before:+.0f})'
                report.extra['compiles'] = compiles.compiles_between(began)
                report.extra['new_keys'] = _keys_made() - keys
            reports.append(report)
            if args.report_json:
                continue  # a child run: the parent prints its report
            print(report.line(), flush=True)
            for failure in report.failures:
                print('   ', failure, flush=True)
    if args.rss_log:
        trace.write_csv(args.rss_log)
    if args.report_json:
        with open(args.report_json, 'w') as f:
            json.dump([{k: getattr(r, k) for k in ('name', 'calls', 'checks', 'wrong', 'failures', 'seconds', 'extra')}
                       for r in reports], f, default=str)
    if args.report_json:  # a child run: the parent prints the summary
        return 0
    failed = sum(not r.ok for r in reports)
    calls = sum(r.calls for r in reports)
    checks = sum(r.checks for r in reports)
    wrong = sum(r.wrong for r in reports)
    rates = next((r.extra['throughput'] for r in reports if 'throughput' in r.extra), 'not measured')
    print(f'stress: {len(reports) - failed} passed, {failed} failed in {time.monotonic() - start:.1f} s; '
          f'{calls} calls, {checks} checks, {wrong} wrong results; longest call {watch.longest:.1f} s '
          f'(bound {watch.bound:.0f} s)')
    print(f'stress: scenario 1 throughput (calls/s by threads): {rates}')
    for r in reports:
        if 'problems' in r.extra:  # the differential scenario's closing line
            print(f'differential: {r.extra["problems"]} problems, {r.checks} comparisons, '
                  f'{r.wrong} disagreements')
    memory_ok = _memory_line(trace, compiles, start, long, settled)
    return 1 if failed or wrong or not memory_ok else 0


def _warm_up(names: list[str], trace: RssTrace, compiles: CompileCount, quiet) -> Report:
    """Call every member of the key sets of scenarios ``names`` once, one thread per core."""
    from stress import batching, config_cycle, config_load, dynamic_batcher, eager_vmap, mixed, prange  # noqa: PLC0415

    report = Report('warm-up')
    steps = {'mixed': lambda: mixed.warm(report, mixed.long_pool(mixed.LONG_SEED)),
             'batching': lambda: batching.warm(report, batching.LONG_SEED),
             'config_cycle': lambda: config_cycle.warm(report),
             'config_load': lambda: config_load.warm(report),
             'eager_vmap': lambda: eager_vmap.warm(report),
             'prange': lambda: prange.warm(report),
             'dynamic_batcher': lambda: dynamic_batcher.warm(report)}
    before, began = rss_mib(), time.monotonic()
    took = {}
    queue = list(names)
    lock = threading.Lock()

    def step(i: int) -> None:
        while True:
            with lock:
                if not queue:
                    return
                name = queue.pop(0)
            steps[name]()
            took[name] = time.monotonic() - began

    trace.mark('warm-up')
    report.failures.extend(run_threads(min(len(names), _cores()), step, 1800))
    report.seconds = time.monotonic() - began
    # When each scenario finished: the last one sets how long the warm-up takes.
    report.extra['of'] = '+'.join(f'{n}:{took[n]:.0f}s' if n in took else n for n in names)
    return _close_early(report, before, began, compiles, quiet)


def _cold_first(name: str, trace: RssTrace, compiles: CompileCount, quiet) -> Report:
    """Scenario ``name``'s cold changes alone (its ``cold_first()``), reported as ``<name>_cold``."""
    before, began = rss_mib(), time.monotonic()
    trace.mark(f'{name}_cold')
    report = importlib.import_module(f'stress.{name}').cold_first()
    return _close_early(report, before, began, compiles, quiet)


def _close_early(report: Report, before, began: float, compiles: CompileCount, quiet) -> Report:
    """Add the memory and compilations since ``began`` to a step made before the scenarios; print it."""
    if before is not None:
        report.extra['rss_mib'] = f'{before:.0f}->{rss_mib():.0f} ({rss_mib() - before:+.0f})'
    report.extra['compiles'] = compiles.compiles_between(began)
    if not quiet:
        print(report.line(), flush=True)
        for failure in report.failures:
            print('   ', failure, flush=True)
    return report


def _cores() -> int:
    """The cores this process may run on."""
    return len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else os.cpu_count() or 1


def _keys_made() -> int:
    return ej.config.configuration_stats().keys_made


def _memory_line(trace: RssTrace, compiles: CompileCount, start: float, long: bool,
                 settled: float | None = None) -> bool:
    """Print RSS at the baseline and at the end; in a long run over 2 minutes, check they are close.

    The baseline is the sample when the warm-up ended (``settled``, seconds into the trace), or
    after the first minute in a run without a warm-up.
    """
    since = RSS_MINUTE if settled is None else settled
    base, end = trace.at(since), trace.samples[-1][1] if trace.samples else None
    if base is None or trace.now() < since:
        print('stress: RSS not checked (psutil missing or a run under a minute)')
        return True
    change = (end - base) / end
    checked = long and trace.now() >= 2 * RSS_MINUTE
    ok = not checked or abs(change) <= RSS_TOLERANCE
    verdict = ('ok' if ok else 'FAILED') if checked else 'not checked (short mode, or a run under 2 minutes)'
    when = f'after {RSS_MINUTE:.0f} s' if settled is None else f'when the warm-up ended ({settled:.0f} s)'
    print(f'stress: RSS {base:.0f} MiB {when}, {end:.0f} MiB at the end '
          f'({100 * change:+.0f}% of the end, bound {100 * RSS_TOLERANCE:.0f}%): {verdict}; '
          f'{compiles.compiles_between(start)} compilations, '
          f'{compiles.compiles_between(start + since)} after {since:.0f} s')
    return ok


if __name__ == '__main__':
    sys.exit(main())
