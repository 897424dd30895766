"""Every backend (pallas interpreted, under x64 too) agrees with the NumPy oracle at the contract's edges (edges.py)."""

import pytest

from tests.differential.edges import KINDS, check, pallas_on_cpu, problems
from tests.differential.profile import agree_on_draws


@pytest.fixture(autouse=True)
def _pallas_registered():
    with pallas_on_cpu():
        yield


@pytest.mark.parametrize('kind', KINDS)
def test_backends_agree_with_the_oracle_at_the_edges(kind):
    agree_on_draws(kind, problems(kind), check)
