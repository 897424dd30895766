"""Every backend agrees with the contract's oracle on the per-synapse products (see per_synapse.py)."""

import pytest

from tests.differential.per_synapse import OPERATORS, check, problems
from tests.differential.profile import agree_on_draws


@pytest.mark.parametrize('name', OPERATORS)
def test_backends_and_transformations_agree_with_the_contract(name):
    agree_on_draws(name, problems(name), check)
