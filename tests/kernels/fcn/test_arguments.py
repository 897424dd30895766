"""Bad arguments to the FCN operators fail at trace time, naming the argument."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej

W = jnp.ones((3, 2), jnp.float32)
IDX = jnp.zeros((3, 2), jnp.int32)
V = jnp.ones(4, jnp.float32)
OPS = [ej.fcnmv, ej.binary_fcnmv]


class TestFcnArguments:
    @pytest.mark.parametrize('fn', OPS)
    def test_indices_of_the_wrong_rank_are_refused(self, fn):
        with pytest.raises(ValueError, match=r'indices must have rank 2'):
            fn(W, IDX.reshape(-1), V, shape=(3, 4))

    @pytest.mark.parametrize('fn', OPS)
    def test_indices_rows_must_match_shape(self, fn):
        with pytest.raises(ValueError, match=r'indices must have shape\[0\] == 4 \(rows of shape\)'):
            fn(W, IDX, V, shape=(4, 4))

    def test_float_indices_are_refused(self):
        with pytest.raises(TypeError, match='indices must be an int32 or int64 array, got float32'):
            ej.fcnmv(W, IDX.astype(jnp.float32), V, shape=(3, 4))

    def test_integer_weights_are_refused(self):
        with pytest.raises(TypeError, match='weights must be a float16, float32 or float64 array, got int32'):
            ej.fcnmv(jnp.ones((3, 2), jnp.int32), IDX, V, shape=(3, 4))

    @pytest.mark.parametrize('weights', [jnp.ones((3, 3)), jnp.ones(6), jnp.ones((2, 2))])
    def test_weights_must_match_indices_or_be_one(self, weights):
        with pytest.raises(ValueError, match=r'weights must have shape \(3, 2\)'):
            ej.fcnmv(weights, IDX, V, shape=(3, 4))

    @pytest.mark.parametrize('transpose, length', [(False, 3), (True, 4)])
    def test_the_vector_length_must_follow_shape(self, transpose, length):
        with pytest.raises(ValueError, match='v must have length'):
            ej.fcnmv(W, IDX, jnp.ones(length), shape=(3, 4), transpose=transpose)

    def test_the_matrix_operand_must_be_2d(self):
        with pytest.raises(ValueError, match='B must have rank 2'):
            ej.fcnmm(W, IDX, V, shape=(3, 4))

    @pytest.mark.parametrize('shape', [(3,), (3, -1), (3.0, 4), 'ab'])
    def test_shape_must_be_a_pair_of_non_negative_ints(self, shape):
        with pytest.raises(ValueError, match='shape must be a pair of non-negative ints'):
            ej.fcnmv(W, IDX, V, shape=shape)

    def test_transpose_must_be_a_bool(self):
        with pytest.raises(TypeError, match='transpose must be a bool'):
            ej.binary_fcnmm(W, IDX, jnp.ones((4, 2)), shape=(3, 4), transpose=1)

    def test_complex_events_are_refused(self):
        with pytest.raises(TypeError, match='spikes must be a bool, integer or float array'):
            ej.binary_fcnmv(W, IDX, jnp.ones(4, jnp.complex64), shape=(3, 4))

    def test_errors_come_at_trace_time_under_jit(self):
        f = jax.jit(lambda v: ej.fcnmv(W, IDX, v, shape=(3, 4)))
        with pytest.raises(ValueError, match='fcnmv\\(\\): v must have length 4'):
            f(jnp.ones(5))

    def test_an_unknown_backend_names_the_known_ones(self):
        with pytest.raises(Exception, match='jax'):
            ej.fcnmv(W, IDX, V, shape=(3, 4), backend='nope')

    def test_homogeneous_weights_of_shape_1_1_are_per_entry_only_when_k_is_1(self):
        got = ej.fcnmv(jnp.full((1, 1), 2.0), jnp.array([[3]]), V, shape=(1, 4))
        np.testing.assert_allclose(got, [2.0])
