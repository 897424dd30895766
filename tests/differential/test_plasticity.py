"""Every backend agrees with the contract's oracle on the plasticity updates (eager, jit, vmap; bad structure)."""

import importlib

import attrs
import pytest
from hypothesis import given

import eventjax as ej
from tests.differential.plasticity import UPDATES, backends_of, check, plasticity_problems
from tests.differential.profile import differential_settings, reproducible


@pytest.mark.parametrize('name', UPDATES)
def test_plasticity_backends_agree_with_the_contract(name):
    @reproducible(name)
    @differential_settings()
    @given(plasticity_problems(name))
    def one(problem):
        bad = check(problem, backends_of(name))
        assert not bad, '\n'.join(bad)

    one()


@pytest.fixture
def pallas_on_cpu():
    """The pallas kernels registered for the cpu (interpret mode) for one test; the tables put back after."""
    before = ej.config.snapshot()
    ej.config.set_pallas_cpu_interpret(True)
    for name in UPDATES:
        getattr(importlib.import_module(f'eventjax.kernels.plasticity.{name}'), f'_{name}').register_pallas()
    yield
    ej.config.update(lambda snap: attrs.evolve(snap, primitives=before.primitives,
                                               pallas_cpu_interpret=before.pallas_cpu_interpret))


@pytest.mark.parametrize('name', UPDATES)
def test_plasticity_pallas_agrees_with_the_contract(name, pallas_on_cpu):
    # Where there is no GPU, pallas runs interpreted: registered for this test only, since the
    # interpreter is too slow to join every other test that parametrizes over the cpu backends.
    @reproducible(f'{name}-pallas')
    @differential_settings()
    @given(plasticity_problems(name))
    def one(problem):
        bad = check(problem, ('pallas',))
        assert not bad, '\n'.join(bad)

    one()
