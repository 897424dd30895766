"""The differential tests' hypothesis settings."""

from hypothesis import given, seed
from hypothesis import strategies as st

from tests.differential.profile import differential_settings, past_the_simplest


def test_past_the_simplest_passes_over_the_first_draw_and_still_makes_every_draw():
    seen = []

    @seed(7)
    @differential_settings(3)
    @given(st.integers(0, 10**6))
    @past_the_simplest
    def draw(x):
        seen.append(x)

    draw()
    assert len(seen) == 3 and 0 not in seen  # 0 is the simplest integer: hypothesis draws it first
