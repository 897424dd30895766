"""Rewrite the generated part of a file, between two marker lines, or check that it is up to date."""

from __future__ import annotations

import pathlib
import sys


def update(path: pathlib.Path, begin: str, end: str, body: str, argv: list[str], tool: str) -> int:
    """Put ``body`` between the lines ``begin`` and ``end`` of ``path``; with ``--check`` in ``argv``, only compare.

    Returns the exit status: 1 when ``--check`` finds the file out of date.
    """
    text = path.read_text()
    if begin not in text or end not in text:
        raise SystemExit(f'{path}: the markers {begin.strip()!r} and {end.strip()!r} are missing')
    head, rest = text.split(begin, 1)
    new = head + begin + body + end + rest.split(end, 1)[1]
    if '--check' in argv:
        if new != text:
            print(f'{path} is out of date: run python {tool}', file=sys.stderr)
            return 1
        return 0
    path.write_text(new)
    return 0
