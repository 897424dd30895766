"""Every backend agrees with the contract's oracle on the index-list operators (see indexed.py)."""

import pytest

from tests.differential.indexed import OPERATORS, check, problems
from tests.differential.profile import agree_on_draws


@pytest.mark.parametrize('name', OPERATORS)
def test_backends_and_transformations_agree_with_the_contract(name):
    agree_on_draws(name, problems(name), check)
