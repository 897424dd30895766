"""The differential tests reach every standard operator, each on at least one backend."""

import sys

import eventjax as ej
from tests.differential import (
    indexed,
    plasticity,
    test_delay,
    test_indexed,
    test_jitc,
    test_mm,
    test_mv,
    test_per_synapse,
    test_plasticity,
    transforms,
)
from tests.differential.strategies import OPERATORS

# The primitives behind the per-synapse products (see per_synapse.check) and the delay tests (test_delay.py).
_PER_SYNAPSE = ('csr_dt2t', 'csr_sddmm')
_DELAY = ('csr_delay_deliver', 'csr_delay_deliver_layout')


def _eventjax_primitives() -> set[str]:
    """The names of the primitives eventjax's kernel modules define (not those other tests make)."""
    names = set()
    for name, module in list(sys.modules.items()):
        if name.startswith('eventjax.kernels.') and module is not None:
            for value in vars(module).values():
                prim = value if isinstance(value, ej.XLACustomKernel) else getattr(value, 'primitive', None)
                if isinstance(prim, ej.XLACustomKernel):
                    names.add(prim.name)
    return names


def _mark_names(obj) -> set[str]:
    marks = getattr(obj, 'pytestmark', [])  # a module may set one mark or a list
    return {mark.name for mark in (marks if isinstance(marks, list) else [marks])}


def test_every_standard_operator_is_exported_registered_and_drawn():
    assert transforms.standard_operators() == OPERATORS


def test_every_operator_has_a_backend_on_this_platform_and_jax_is_first():
    for name in OPERATORS:
        backends = transforms.backends(name)
        assert backends and backends[0] == 'jax', (name, backends)


def test_the_default_run_draws_every_primitive_of_eventjax_on_each_of_its_backends():
    # Each differential test checks its operator on every backend the primitive has, under every
    # transformation; so the (operator, backend, transformation) triples `make test` covers follow
    # from which primitives these tests draw, and from none of them being left to `make test-long`.
    drawn = {*OPERATORS, *plasticity.UPDATES, *indexed.OPERATORS, *_PER_SYNAPSE, *_DELAY}
    missing = _eventjax_primitives() - drawn
    assert not missing, f'no differential test draws {sorted(missing)}: add it to one (tests/differential/README.md)'
    for module in (test_mv, test_mm, test_jitc, test_per_synapse, test_plasticity, test_indexed, test_delay):
        tests = [module, *(test for name, test in vars(module).items() if name.startswith('test_'))]
        long = [test.__name__ for test in tests if 'long' in _mark_names(test)]
        assert not long, f'{long} run in make test-long only'
