"""The default run's pairwise covering of a test grid (tests/grid.py)."""

import itertools

from tests import grid


def _rows(*sizes):
    names = 'abcdef'[:len(sizes)]
    return [tuple(zip(names, values)) for values in itertools.product(*(range(n) for n in sizes))]


def test_every_pair_of_values_meets_in_fewer_rows():
    rows = _rows(4, 2, 2, 2)
    kept = grid.covering(rows)
    assert len(kept) < len(rows) / 3
    covered = set().union(*(grid._pairs(rows[i]) for i in kept))
    assert covered == set().union(*(grid._pairs(row) for row in rows))


def test_two_axes_keep_their_whole_product_and_the_choice_is_stable():
    assert grid.covering(_rows(3, 2)) == list(range(6))
    assert grid.covering(_rows(3, 3, 2)) == grid.covering(_rows(3, 3, 2))


def test_a_grid_that_is_not_a_full_product_is_covered_by_its_own_rows():
    rows = _rows(3, 2, 2)[:-2]
    kept = grid.covering(rows)
    assert set(kept) <= set(range(len(rows)))
    assert set().union(*(grid._pairs(rows[i]) for i in kept)) == set().union(*(grid._pairs(r) for r in rows))
