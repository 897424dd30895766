"""The default run's share of a parametrized test: a covering of its grid's values, per backend.

A test parametrized over several axes (shapes, dtypes, transpose, weight
kind, ...) runs in ``make test`` on the fewest of its rows that still hold
every value of each axis, for every backend; ``make test-long`` runs the
rows left out (they are marked ``long``). So every dtype, shape, direction
and weight kind still runs on every backend in the default run, and the
whole product runs in the long one. A grid over one axis (besides the
backend) keeps all its rows.
"""

from __future__ import annotations

import pytest

#: The parameter every kernel test class is spread over: each of its values keeps its own covering.
APART = ('backend',)


def covering(rows):
    """The indices of a covering of ``rows`` (tuples of ``(axis, value)``): every value once, greedy and stable."""
    values = [set(row) for row in rows]
    todo = set().union(*values)
    kept = []
    while todo:
        # the first row of the most new values wins: the same choice on every xdist worker
        best = max(range(len(rows)), key=lambda i: len(values[i] & todo))
        kept.append(best)
        todo -= values[best]
    return sorted(kept)


def mark_outside_the_covering(items):
    """Mark ``long`` every parametrized row outside its group's covering (see the module docstring)."""
    groups = {}
    for item in items:
        spec = getattr(item, 'callspec', None)
        if spec is None or item.get_closest_marker('long') is not None:
            continue
        # values by repr: they may be arrays or dtypes; callspec.indices does not number the values
        axes = tuple(sorted((name, repr(value)) for name, value in spec.params.items() if name not in APART))
        if len(axes) < 2:
            continue
        apart = tuple((name, repr(spec.params[name])) for name in APART if name in spec.params)
        groups.setdefault((item.path, item.cls, item.originalname, apart), []).append((axes, item))
    for members in groups.values():
        rows = [axes for axes, _ in members]
        kept = set(covering(rows))
        for i, (_, item) in enumerate(members):
            if i not in kept:
                item.add_marker(pytest.mark.long)
