"""The differential tests reach every standard operator, each on at least one backend."""

from tests.differential import transforms
from tests.differential.strategies import OPERATORS


def test_every_standard_operator_is_exported_registered_and_drawn():
    assert transforms.standard_operators() == OPERATORS


def test_every_operator_has_a_backend_on_this_platform_and_jax_is_first():
    for name in OPERATORS:
        backends = transforms.backends(name)
        assert backends and backends[0] == 'jax', (name, backends)
