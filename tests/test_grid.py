"""The default run's covering of a test grid (tests/grid.py)."""

import itertools

from tests import grid


def _rows(*sizes):
    names = 'abcdef'[:len(sizes)]
    return [tuple(zip(names, values)) for values in itertools.product(*(range(n) for n in sizes))]


def _values(rows, kept):
    return set().union(*(rows[i] for i in kept))


def test_every_value_runs_in_as_few_rows_as_the_longest_axis():
    rows = _rows(4, 2, 3, 2)
    kept = grid.covering(rows)
    assert len(kept) == 4
    assert _values(rows, kept) == _values(rows, range(len(rows)))


def test_the_choice_is_stable_and_a_one_value_axis_adds_nothing():
    assert grid.covering(_rows(3, 3, 2)) == grid.covering(_rows(3, 3, 2))
    assert grid.covering(_rows(3, 1)) == [0, 1, 2]


def test_a_grid_that_is_not_a_full_product_is_covered_by_its_own_rows():
    rows = _rows(3, 2, 2)[:-2]
    kept = grid.covering(rows)
    assert set(kept) <= set(range(len(rows)))
    assert _values(rows, kept) == _values(rows, range(len(rows)))
