"""The default run's share of a parametrized test: a pairwise covering of its grid, per backend.

A test parametrized over several axes (shapes, dtypes, transpose, weight
kind, ...) runs in ``make test`` on the fewest of its rows that still pair
every value of each axis with every value of every other axis, for every
backend; ``make test-long`` runs the rows left out (they are marked
``long``). So every dtype still meets every shape, direction and weight kind
on every backend in the default run, and the whole product runs in the long
one. A grid over one axis (besides the backend) keeps all its rows.
"""

from __future__ import annotations

import itertools

import pytest

#: The parameter every kernel test class is spread over: each of its values keeps its own covering.
APART = ('backend',)


def _pairs(row):
    return {(a, ia, b, ib) for (a, ia), (b, ib) in itertools.combinations(row, 2)}


def covering(rows):
    """The indices of a pairwise covering of ``rows`` (tuples of ``(axis, value)``), greedy and stable."""
    pairs = [_pairs(row) for row in rows]
    todo = set().union(*pairs)
    kept = []
    while todo:
        # the first row of the most new pairs wins: the same choice on every xdist worker
        best = max(range(len(rows)), key=lambda i: len(pairs[i] & todo))
        kept.append(best)
        todo -= pairs[best]
    return sorted(kept)


def mark_outside_the_covering(items):
    """Mark ``long`` every parametrized row outside its group's pairwise covering (see the module docstring)."""
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
