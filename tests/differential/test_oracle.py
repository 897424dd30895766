"""The oracle says what the contract says, on hand-worked cases (no eventjax involved)."""

import numpy as np

from tests.differential import oracle
from tests.differential.strategies import Problem

NAN, INF = np.nan, np.inf


def make(name, structure, x, *, shape, transpose=False, promotion='standard'):
    x = np.asarray(x)
    out = shape[1] if transpose else shape[0]
    ct = np.ones((out, *x.shape[1:]))
    return Problem(name=name, structure=tuple(np.asarray(a) for a in structure), x=x, xs=np.stack([x, x]),
                   ct=ct, transpose=transpose, shape=shape, promotion=promotion)


class TestForward:
    def test_a_non_event_adds_nothing_even_with_a_nan_or_inf_weight(self):
        w = np.array([[1.0, NAN], [INF, 2.0]], np.float32)
        got = oracle.forward(make('binary_densemv', (w,), [True, False], shape=(2, 2)), [True, False])
        np.testing.assert_array_equal(got.value, [1.0, INF])

    def test_nan_is_not_an_event_and_inf_is(self):
        w = np.array([[1.0, 2.0, 4.0]], np.float32)
        x = np.array([NAN, INF, -INF], np.float32)
        got = oracle.forward(make('binary_densemv', (w,), x, shape=(1, 3)), x)
        np.testing.assert_array_equal(got.value, [2.0])

    def test_a_float_product_is_ieee_over_stored_entries(self):
        data, indices, indptr = np.array([INF, 1.0], np.float32), np.array([0, 1]), np.array([0, 1, 2])
        x = np.array([0.0, 3.0], np.float32)
        got = oracle.forward(make('csrmv', (data, indices, indptr), x, shape=(2, 2)), x)
        np.testing.assert_array_equal(got.value, [NAN, 3.0])

    def test_bad_columns_are_dropped_not_wrapped(self):
        data, indices, indptr = np.array([1.0, 2.0, 4.0], np.float32), np.array([-1, 1, 2]), np.array([0, 3])
        x = np.array([10.0, 100.0], np.float32)
        problem = make('csrmv', (data, indices, indptr), x, shape=(1, 2))
        assert oracle.structure_error(problem) is not None
        np.testing.assert_array_equal(oracle.forward(problem, x).value, [200.0])

    def test_rows_come_from_the_repaired_indptr(self):
        # cummax(clip([0, 5, -1, 2], 0, 3)) = [0, 3, 3, 3]: row 0 owns every entry.
        data, indices, indptr = np.array([1.0, 2.0, 4.0], np.float32), np.zeros(3, int), np.array([0, 5, -1, 2])
        x = np.array([1.0], np.float32)
        got = oracle.forward(make('csrmv', (data, indices, indptr), x, shape=(3, 1)), x)
        np.testing.assert_array_equal(got.value, [7.0, 0.0, 0.0])

    def test_float16_weights_times_float32_operand_is_float32(self):
        w, indices = np.array([1.0], np.float16), np.array([[0]])
        x = np.array([70000.0], np.float32)
        got = oracle.forward(make('fcnmv', (w, indices), x, shape=(1, 1)), x)
        assert got.dtype == np.float32 and got.value[0] == 70000.0


class TestGradients:
    def test_weight_cotangent_is_zero_without_an_event_or_a_valid_column(self):
        w, indices = np.array([[1.0, 1.0, 1.0]], np.float32), np.array([[0, 1, 5]])
        problem = make('binary_fcnmv', (w, indices), np.array([True, False]), shape=(1, 2))
        np.testing.assert_array_equal(oracle.weight_grad(problem).value, [[1.0, 0.0, 0.0]])

    def test_operand_cotangent_is_the_transposed_product(self):
        w = np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
        data, indices, indptr = w.reshape(-1), np.array([0, 1, 0, 1]), np.array([0, 2, 4])
        problem = make('csrmv', (data, indices, indptr), np.ones(2, np.float32), shape=(2, 2))
        np.testing.assert_array_equal(oracle.operand_grad(problem).value, [4.0, 6.0])


class TestMismatch:
    def test_nan_positions_infinities_and_dtype_must_match(self):
        want = oracle.Value(np.array([NAN, INF, 1.0]), np.array([0.0, 0.0, 1.0]), np.dtype('float32'))
        assert oracle.mismatch(np.array([NAN, INF, 1.0], np.float32), want) is None
        assert 'NaN' in oracle.mismatch(np.array([0.0, INF, 1.0], np.float32), want)
        assert 'infinity' in oracle.mismatch(np.array([NAN, -INF, 1.0], np.float32), want)
        assert 'dtype' in oracle.mismatch(np.array([NAN, INF, 1.0], np.float16), want)

    def test_the_tolerance_scales_with_the_sum_of_absolute_terms(self):
        want = oracle.Value(np.array([0.0]), np.array([1000.0]), np.dtype('float32'))
        assert oracle.mismatch(np.array([0.005], np.float32), want) is None
        assert 'value differs' in oracle.mismatch(np.array([0.02], np.float32), want)
