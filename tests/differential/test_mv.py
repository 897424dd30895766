"""Every backend agrees with the contract's oracle on the matrix-vector operators."""

import pytest
from hypothesis import given

from tests.differential.check import check_problem
from tests.differential.profile import differential_settings, past_the_simplest, reproducible
from tests.differential.strategies import family, problems
from tests.differential.transforms import standard_operators

OPERATORS = [n for n in standard_operators() if n.endswith('mv') and family(n) != 'jitc']


@pytest.mark.parametrize('name', OPERATORS)
def test_backends_and_transformations_agree_with_the_contract(name):
    @reproducible(name)
    @differential_settings()
    @given(problems(name))
    @past_the_simplest
    def check(problem):
        outcome = check_problem(problem)
        assert not outcome.disagreements, outcome.summary()

    check()
