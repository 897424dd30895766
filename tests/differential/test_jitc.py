"""Every backend agrees with the contract's oracle (built from ``JITCMatrix.todense()``) on the JITC operators."""

import os

import pytest
from hypothesis import given

from tests.differential.check import check_problem
from tests.differential.profile import differential_settings, reproducible
from tests.differential.strategies import FAMILIES, problems
from tests.differential.transforms import standard_operators

OPERATORS = [n for n in standard_operators() if n in FAMILIES['jitc']]
# Fewer draws than the other families by default: every draw compiles the generator's loops anew. The
# default single draw is hypothesis's simplest problem (an empty matrix: cheap), the other draws random.
EXAMPLES = int(os.environ.get('EVENTJAX_DIFF_JITC_EXAMPLES', 1))


@pytest.mark.parametrize('name', OPERATORS)
def test_backends_and_transformations_agree_with_the_contract(name):
    @reproducible(name)
    @differential_settings(EXAMPLES)
    @given(problems(name))
    def check(problem):
        outcome = check_problem(problem)
        assert not outcome.disagreements, outcome.summary()

    check()
