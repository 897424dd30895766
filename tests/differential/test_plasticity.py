"""Every backend agrees with the contract's oracle on the plasticity updates (eager, jit, vmap; bad structure)."""

import pytest
from hypothesis import given

from tests.differential import plasticity
from tests.differential.plasticity import CHECKED, UPDATES, backends_of, check, plasticity_problems
from tests.differential.profile import differential_settings, past_the_simplest, reproducible


@pytest.mark.parametrize('name', CHECKED)
def test_plasticity_backends_agree_with_the_contract(name):
    @reproducible(name)
    @differential_settings()
    @given(plasticity_problems(name))
    @past_the_simplest
    def one(problem):
        bad = check(problem, backends_of(name))
        assert not bad, '\n'.join(bad)

    one()


@pytest.fixture
def pallas_on_cpu():
    with plasticity.pallas_on_cpu():
        yield


@pytest.mark.parametrize('name', UPDATES)
def test_plasticity_pallas_agrees_with_the_contract(name, pallas_on_cpu):
    # Where there is no GPU, pallas runs interpreted, registered for this test only.
    @reproducible(f'{name}-pallas')
    @differential_settings()
    @given(plasticity_problems(name))
    @past_the_simplest
    def one(problem):
        bad = check(problem, ('pallas',))
        assert not bad, '\n'.join(bad)

    one()
