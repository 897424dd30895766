"""Run the stress scenarios: ``python -m stress --mode short|long [--seconds N] [--only ...]``."""

from __future__ import annotations

import argparse
import importlib
import inspect
import sys
import time

from stress.harness import CallWatch, Watchdog, install_watch

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
}
DEFAULT_SECONDS = {'short': 45.0, 'long': 180.0}
# One call (compilation included, on a loaded 2-core machine) may take this long.
CALL_BOUND = {'short': 120.0, 'long': 180.0}


def _rss_mib() -> int | str:
    try:
        import psutil  # noqa: PLC0415  (the test extra)
    except ImportError:
        return 'n/a'
    return round(psutil.Process().memory_info().rss / 2**20)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog='python -m stress', description=__doc__)
    parser.add_argument('--mode', choices=('short', 'long'), default='short')
    parser.add_argument('--seconds', type=float, default=None,
                        help='total time budget (default: 45 short, 180 long)')
    parser.add_argument('--call-bound', type=float, default=None,
                        help='fail the run if one call takes longer (seconds)')
    parser.add_argument('--only', nargs='*', choices=sorted(SCENARIOS), default=None)
    parser.add_argument('--diff-examples', type=int, default=None,
                        help='problems the differential scenario draws at most (default: 2 short, 400 long)')
    parser.add_argument('--diff-seconds', type=float, default=None,
                        help="the differential scenario's own time bound (default: its share of --seconds)")
    args = parser.parse_args(argv)
    total = args.seconds or DEFAULT_SECONDS[args.mode]
    long = args.mode == 'long'
    names = args.only or list(SCENARIOS)
    shares = sum(SCENARIOS[n] for n in names)
    reports = []
    start = time.monotonic()
    watch = CallWatch(args.call_bound or CALL_BOUND[args.mode])
    install_watch(watch)
    budgets = {n: total * SCENARIOS[n] / shares for n in names}
    if 'differential' in budgets and args.diff_seconds:
        budgets['differential'] = args.diff_seconds
    with Watchdog(sum(budgets.values()) * 3 + 600), watch:
        for name in names:
            module = importlib.import_module(f'stress.{name}')
            budget = budgets[name]
            accepts = inspect.signature(module.run).parameters
            kwargs = {'long': long} if 'long' in accepts else {}
            if 'examples' in accepts:
                kwargs['examples'] = args.diff_examples
            report = module.run(seconds=budget, **kwargs)
            report.extra['rss_after_mib'] = _rss_mib()
            reports.append(report)
            print(report.line(), flush=True)
            for failure in report.failures:
                print('   ', failure, flush=True)
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
    return 1 if failed or wrong else 0


if __name__ == '__main__':
    sys.exit(main())
