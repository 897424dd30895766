"""``python -m benchmarks``: the same as ``eventjax bench``."""

import sys

from benchmarks.cli import main

if __name__ == '__main__':
    sys.exit(main(prog='python -m benchmarks'))
