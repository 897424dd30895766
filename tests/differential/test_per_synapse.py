"""Every backend agrees with the contract's oracle on the per-synapse products (see per_synapse.py)."""

import pytest
from hypothesis import given

from tests.differential.per_synapse import OPERATORS, check, problems
from tests.differential.profile import differential_settings, reproducible


@pytest.mark.parametrize('name', OPERATORS)
def test_backends_and_transformations_agree_with_the_contract(name):
    @reproducible(name)
    @differential_settings()
    @given(problems(name))
    def run(problem):
        bad = check(problem)
        assert not bad, '\n'.join(bad)

    run()
