"""Bad arguments fail at trace time with errors naming the argument, what was expected and what came."""

import jax.numpy as jnp
import pytest

import eventjax as ej

DATA, INDICES, INDPTR = jnp.ones(3), jnp.array([0, 1, 1]), jnp.array([0, 2, 3])
V = jnp.ones(2)


def csr(**overrides):
    args = dict(data=DATA, indices=INDICES, indptr=INDPTR, v=V, shape=(2, 2))
    args.update(overrides)
    return args


CSR_CASES = [
    (csr(indptr=jnp.array([0, 3])), ValueError, r'csrmv\(\): indptr must have length 3 \(rows \+ 1\), got 2'),
    (csr(v=jnp.ones(3)), ValueError, r'v must have length 2 \(columns of shape\), got 3'),
    (csr(v=jnp.ones((2, 2))), ValueError, r'v must have rank 1, got rank 2'),
    (csr(data=jnp.ones(2)), ValueError, r'data must have length 3 .* or 1 .*, got 2'),
    (csr(data=jnp.ones((3, 1))), ValueError, r'data must have rank 1'),
    (csr(data=jnp.array([1, 2, 3])), TypeError, r'data must be a float16, float32 or float64 array, got int32'),
    (csr(indices=jnp.array([0.0, 1.0, 1.0])), TypeError, r'indices must be an int32 or int64 array, got float32'),
    (csr(indptr=jnp.array([0.0, 2.0, 3.0])), TypeError, r'indptr must be an int32 or int64 array'),
    (csr(indices=jnp.ones((3, 1), jnp.int32)), ValueError, r'indices must have rank 1'),
    (csr(indices=[0, 1, 1]), TypeError, r'csrmv\(\): indices must be an array or a scalar, got a list'),
    (csr(data=(1.0, 1.0, 1.0)), TypeError, r'data must be an array or a scalar, got a tuple; wrap it with jnp'),
    (csr(v=[1.0, 1.0]), TypeError, r'v must be an array or a scalar, got a list'),
    (csr(shape=(2,)), ValueError, r'shape must be a pair of non-negative ints'),
    (csr(shape=(2, -1)), ValueError, r'shape must be a pair of non-negative ints'),
    (csr(shape=(2.0, 2)), ValueError, r'shape must be a pair of non-negative ints'),
    (csr(shape=(3, 2)), ValueError, r'indptr must have length 4 \(rows \+ 1\), got 3'),
    (csr(v=jnp.ones(2, jnp.complex64)), TypeError, r'v must be a real numeric array, got complex64'),
]


class TestCsrArguments:
    @pytest.mark.parametrize('kwargs, error, message', CSR_CASES)
    def test_bad_csrmv_arguments_are_named(self, kwargs, error, message):
        with pytest.raises(error, match=message):
            ej.csrmv(kwargs.pop('data'), kwargs.pop('indices'), kwargs.pop('indptr'), kwargs.pop('v'), **kwargs)

    def test_the_transposed_length_comes_from_the_rows(self):
        with pytest.raises(ValueError, match=r'spikes must have length 4 \(rows of shape, as transpose=True\)'):
            ej.binary_csrmv(DATA, INDICES, jnp.array([0, 1, 2, 3, 3]), jnp.ones(2), shape=(4, 2), transpose=True)

    def test_mm_wants_a_matrix(self):
        with pytest.raises(ValueError, match=r'csrmm\(\): B must have rank 2, got rank 1'):
            ej.csrmm(DATA, INDICES, INDPTR, V, shape=(2, 2))

    def test_mm_rows_must_match(self):
        with pytest.raises(ValueError, match=r'binary_csrmm\(\): B must have shape\[0\] == 2'):
            ej.binary_csrmm(DATA, INDICES, INDPTR, jnp.ones((3, 4), bool), shape=(2, 2))

    def test_transpose_must_be_a_bool(self):
        with pytest.raises(TypeError, match='transpose must be a bool, got 1'):
            ej.csrmv(DATA, INDICES, INDPTR, V, shape=(2, 2), transpose=1)

    def test_events_must_be_real(self):
        with pytest.raises(TypeError, match='spikes must be a bool, integer or float array'):
            ej.binary_csrmv(DATA, INDICES, INDPTR, jnp.ones(2, jnp.complex64), shape=(2, 2))


class TestDenseArguments:
    def test_weights_must_be_a_float_matrix(self):
        with pytest.raises(TypeError, match=r'binary_densemv\(\): weights must be a float16, float32 or float64'):
            ej.binary_densemv(jnp.ones((2, 2), jnp.int32), V)
        with pytest.raises(ValueError, match='weights must have rank 2, got rank 1'):
            ej.binary_densemv(jnp.ones(2), V)

    def test_spikes_length_must_match(self):
        with pytest.raises(ValueError, match=r'spikes must have length 3 \(columns of weights\), got 2'):
            ej.binary_densemv(jnp.ones((2, 3)), V)
        with pytest.raises(ValueError, match=r'spikes must have shape\[0\] == 2 \(rows of weights'):
            ej.binary_densemm(jnp.ones((2, 3)), jnp.ones((3, 1)), transpose=True)


class TestBackendChoice:
    def test_an_unknown_backend_names_the_known_ones(self):
        with pytest.raises(ValueError, match='jax'):
            ej.csrmv(DATA, INDICES, INDPTR, V, shape=(2, 2), backend='nope')
