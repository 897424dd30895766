"""Hand-picked problems for the contract's main points, checked like drawn ones on every backend.

A handful of random draws per operator may miss them; these run every time.
"""

import jax.numpy as jnp
import numpy as np
import pytest

from tests.differential.check import check_problem
from tests.differential.strategies import Problem

NAN, INF = np.nan, np.inf
I32, F16, F32 = np.int32, np.float16, np.float32
BF16 = np.dtype(jnp.bfloat16)


def make(name, structure, x, shape, *, transpose=False, promotion='standard'):
    x = np.asarray(x)
    out = shape[1] if transpose else shape[0]
    ct = np.linspace(-1.0, 1.0, out * int(np.prod(x.shape[1:], dtype=int))).reshape(out, *x.shape[1:])
    return Problem(name=name, structure=tuple(np.asarray(a) for a in structure), x=x, xs=np.stack([x, x[::-1]]),
                   ct=np.round(ct * 4) / 4, transpose=transpose, shape=shape, promotion=promotion)


CASES = {
    'float16_weights_times_float32_vector_is_float32': make(
        'fcnmv', (np.array([[1.0]], F16), np.array([[0]], I32)), np.array([70000.0], F32), (1, 1)),
    'a_mixed_pair_under_strict_promotion_raises': make(
        'csrmv', (np.array([1.0], F16), np.array([0], I32), np.array([0, 1], I32)), np.array([2.0], F32), (1, 1),
        promotion='strict'),
    'nan_weight_on_a_non_event_row_adds_nothing_csr_transpose': make(
        'binary_csrmv', (np.array([NAN, 1.0], F32), np.array([0, 0], I32), np.array([0, 1, 2], I32)),
        np.array([False, True]), (2, 1), transpose=True),
    'nan_weight_on_a_non_event_adds_nothing_fcn_gather': make(
        'binary_fcnmv', (np.array([[NAN, 1.0]], F32), np.array([[0, 1]], I32)), np.array([NAN, 2.0], F32), (1, 2)),
    'inf_weight_on_a_non_event_adds_nothing_dense': make(
        'binary_densemm', (np.array([[INF, 1.0], [2.0, -INF]], F32),), np.array([[0.0, 1.0], [-1.0, 0.5]], F32),
        (2, 2)),
    'a_float_product_keeps_inf_times_zero_nan': make(
        'csrmv', (np.array([INF, 1.0], F32), np.array([0, 1], I32), np.array([0, 2], I32)), np.array([0.0, 1.0], F32),
        (1, 2)),
    'a_negative_column_is_dropped_not_wrapped': make(
        'csrmv', (np.array([1.0, 2.0], F32), np.array([-1, 1], I32), np.array([0, 2], I32)),
        np.array([10.0, 100.0], F32), (1, 2)),
    'a_column_past_n_is_dropped_fcn': make(
        'binary_fcnmm', (np.array([[1.0, 2.0]], F32), np.array([[0, 3]], I32)), np.ones((2, 1), bool), (1, 2)),
    'rows_come_from_the_repaired_indptr': make(
        'binary_csrmv', (np.array([1.0, 2.0, 4.0], F32), np.zeros(3, I32), np.array([0, 5, -1, 2], I32)),
        np.array([True]), (3, 1)),
    'bfloat16_events_give_one_result_on_every_backend_eager_or_jitted': make(
        'binary_csrmv', (np.array([1.0, 2.0, 4.0], F32), np.array([0, 1, 1], I32), np.array([0, 2, 3], I32)),
        np.array([0.5, -1.0], BF16), (2, 2), transpose=True),
}


@pytest.mark.parametrize('name', list(CASES))
def test_every_backend_and_transformation_follows_the_contract(name):
    outcome = check_problem(CASES[name])
    assert outcome.comparisons > 0
    assert not outcome.disagreements, outcome.summary()
