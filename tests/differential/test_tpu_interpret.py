"""Every pallas TPU kernel, run in Pallas's TPU interpreter, agrees with the contract's oracle and with jax.

The operators are those of the differential tester whose primitive has a
pallas kernel for the tpu: a TPU kernel joins by being registered. Delayed
delivery and plasticity have testers of their own (``delay.py``,
``plasticity.py`` beside this file), run here on their TPU kernels.
"""

import pytest
from hypothesis import given

from tests.differential.check import check_problem
from tests.differential.delay import check_delivery, check_layout_delivery, deliveries
from tests.differential.plasticity import check, plasticity_problems
from tests.differential.profile import differential_settings, past_the_simplest, reproducible
from tests.differential.strategies import family, problems
from tests.differential.transforms import standard_operators
from tests.kernels.pallas.tpu_interpret import BACKEND, tpu_kernel_operators, tpu_kernels_on_cpu

OPERATORS = [n for n in standard_operators() if n in tpu_kernel_operators() and family(n) != 'jitc']


@pytest.fixture(autouse=True, scope='module')
def _tpu_kernels():
    with tpu_kernels_on_cpu():
        yield


def test_the_dense_tpu_kernels_are_among_them():
    """The sweep below covers at least the dense family's TPU kernels."""
    assert {'binary_densemv', 'binary_densemm'} <= set(OPERATORS)


@pytest.mark.parametrize('name', OPERATORS)
def test_tpu_kernels_agree_with_the_contract(name):
    @reproducible(f'{name}-{BACKEND}')
    @differential_settings()
    @given(problems(name))
    @past_the_simplest
    def check(problem):
        outcome = check_problem(problem, ('jax', BACKEND))
        assert not outcome.disagreements, outcome.summary()

    check()


@reproducible(f'csr_delay_deliver-{BACKEND}')
@differential_settings()
@given(deliveries())
@past_the_simplest
def test_the_tpu_delivery_kernels_agree_with_the_oracle(problem):
    """Both delivery forms, eager, jit, vmap and grad, against the delivery oracle."""
    assert check_delivery(problem, (BACKEND,)) > 0
    assert check_layout_delivery(problem, (BACKEND,)) > 0


@pytest.mark.parametrize('name', ['dense_on_pre', 'fcn_on_pre', 'csr_on_pre', 'dense_on_post',
                                  pytest.param('csr2csc_on_post', marks=pytest.mark.long)])  # on request only
def test_the_tpu_plasticity_kernels_agree_with_the_contract(name):
    """The plasticity tester (eager, jit with traced structure, vmap; bounds, NaN/Inf) on their TPU kernels."""
    assert name in tpu_kernel_operators()

    @reproducible(f'{name}-{BACKEND}')
    @differential_settings()
    @given(plasticity_problems(name))
    @past_the_simplest
    def one(problem):
        bad = check(problem, (BACKEND,))
        assert not bad, '\n'.join(bad)

    one()
