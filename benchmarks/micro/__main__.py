"""Run every benchmark section and print its table."""

from __future__ import annotations

import argparse
import importlib

SECTIONS = ['config_switch', 'config_cycle', 'numba_bridge', 'backends_toy', 'kernels_dense_csr', 'kernels_fcn',
            'kernels_jitc', 'numba_threads', 'cold']


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog='python -m benchmarks.micro')
    parser.add_argument('sections', nargs='*', help=f'any of {SECTIONS} (default: all)')
    args = parser.parse_args(argv)
    unknown = set(args.sections) - set(SECTIONS)
    if unknown:
        parser.error(f'unknown sections {sorted(unknown)}; choose from {SECTIONS}')
    for name in args.sections or SECTIONS:
        importlib.import_module(f'benchmarks.micro.{name}').main()


if __name__ == '__main__':
    main()
