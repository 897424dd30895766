"""brainevent's rules on eventjax give brainevent 0.3.0's numbers, case by case (make test-compat).

``rules.py`` computes each case once per stack in its own process: the event
rule (negative, zero and NaN spikes) in the products and the delayed
delivery, the plasticity updates with weights outside their bounds and with
units, and brainpy 2.9's ``stdp_update``. The error cases must raise at least
the classes brainevent raises (eventjax's add ``ValueError``).
"""

import pathlib
import subprocess
import sys

import numpy as np
import pytest

HERE = pathlib.Path(__file__).resolve().parent
TIMEOUT = 600


@pytest.fixture(scope='module')
def results(tmp_path_factory):
    folder = tmp_path_factory.mktemp('rules')
    out = {}
    for on in ('eventjax', 'brainevent'):
        path = folder / f'{on}.npz'
        subprocess.run([sys.executable, str(HERE / 'rules.py'), '--on', on, '--out', str(path)], check=True,
                       timeout=TIMEOUT)
        out[on] = dict(np.load(path))
    return out


def test_every_case_ran_on_both_stacks(results):
    assert set(results['eventjax']) == set(results['brainevent'])
    assert len(results['eventjax']) >= 20


NUMBERS = ['dense_product_float', 'csr_product_float', 'delay_float', 'delay_binary_array_float',
           'dense_product_int', 'csr_product_int', 'delay_int', 'delay_binary_array_int', 'dense_pre', 'dense_post',
           'dense_pre_unbounded', 'dense_pre_max_only', 'csr_pre', 'csr_post', 'csr_container_pre',
           'csr_container_post', 'csc_pre', 'csc_post', 'fcn_pre', 'fcn_post', 'units_dense_pre', 'units_csr_pre',
           'brainpy_dense_stdp', 'brainpy_csr_stdp']


@pytest.mark.parametrize('case', NUMBERS)
def test_the_case_gives_brainevents_numbers(results, case):
    ours, theirs = results['eventjax'][case], results['brainevent'][case]
    assert ours.shape == theirs.shape
    np.testing.assert_allclose(ours, theirs, rtol=1e-6, atol=1e-6)


@pytest.mark.parametrize('case', ['error_shape', 'error_rank0'])
def test_the_error_is_caught_by_brainevents_classes(results, case):
    theirs = results['brainevent'][case]
    assert theirs.any()  # brainevent raises here
    assert results['eventjax'][case][theirs].all()
