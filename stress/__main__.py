"""Run the stress scenarios: ``python -m stress --mode short|long [--seconds N]``."""

from __future__ import annotations

import argparse
import sys
import time

from stress import config_flip
from stress.harness import Watchdog

# name -> (module, share of the time budget)
SCENARIOS = {
    'config_flip': (config_flip, 1.0),
}


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(prog='python -m stress', description=__doc__)
    parser.add_argument('--mode', choices=('short', 'long'), default='short')
    parser.add_argument('--seconds', type=float, default=None,
                        help='total time budget (default: 20 short, 180 long)')
    parser.add_argument('--only', nargs='*', choices=sorted(SCENARIOS), default=None)
    args = parser.parse_args(argv)
    total = args.seconds or (20.0 if args.mode == 'short' else 180.0)
    names = args.only or list(SCENARIOS)
    shares = sum(SCENARIOS[n][1] for n in names)
    failed = 0
    start = time.monotonic()
    with Watchdog(total * 3 + 300):
        for name in names:
            module, share = SCENARIOS[name]
            report = module.run(seconds=total * share / shares)
            print(report.line(), flush=True)
            for failure in report.failures:
                print('   ', failure)
            failed += not report.ok
    passed = len(names) - failed
    print(f'stress: {passed} passed, {failed} failed in {time.monotonic() - start:.1f} s')
    return 1 if failed else 0


if __name__ == '__main__':
    sys.exit(main())
