"""``python -m eventjax``: the same command line as the ``eventjax`` script."""

from eventjax.cli import main

if __name__ == '__main__':
    raise SystemExit(main())
