"""Bad JITC calls raise clear errors naming the argument, the same on every backend."""

import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej

V = jnp.ones(4)


def call(**kwargs):
    args = dict(seed=0, prob=0.5, shape=(3, 4), law='homo', backend='jax')
    args.update(kwargs)
    weights = args.pop('weights', 1.0)
    return ej.jitcmv(weights, args.pop('v', V), **args)


class TestBadArguments:
    @pytest.mark.parametrize('prob', [-0.1, 1.5, float('nan')])
    def test_prob_outside_zero_one_or_nan(self, prob):
        with pytest.raises(ValueError, match=r'prob must be in \[0, 1\]'):
            call(prob=prob)

    def test_negative_scale(self):
        with pytest.raises(ValueError, match='scale >= 0'):
            call(law='normal', weights=(0.0, -1.0))

    def test_low_above_high(self):
        with pytest.raises(ValueError, match='low <= high'):
            call(law='uniform', weights=(2.0, 1.0))

    @pytest.mark.parametrize('seed', [1.5, jnp.float32(2.0), True])
    def test_non_integer_seed(self, seed):
        with pytest.raises(TypeError, match='seed must be an integer'):
            call(seed=seed)

    def test_a_seed_array_is_refused(self):
        with pytest.raises(ValueError, match='seed must be a scalar'):
            call(seed=jnp.arange(2))

    def test_shapes_that_overflow_the_index_type(self):
        with pytest.raises(ValueError, match='overflows the int32 column index'):
            call(shape=(3, 2**31 - 10), v=jnp.ones(1), prob=0.001)

    def test_unknown_law(self):
        with pytest.raises(ValueError, match="law must be 'homo', 'uniform' or 'normal'"):
            call(law='gamma')

    def test_law_params_of_the_wrong_size(self):
        with pytest.raises(ValueError, match=r'\(low, high\), a pair'):
            call(law='uniform', weights=1.0)

    def test_integer_weights(self):
        with pytest.raises(TypeError, match='float16, float32 or float64'):
            call(weights=np.int32(1))

    @pytest.mark.parametrize('backend', ['jax', 'numba', 'warp'])
    def test_the_error_class_is_the_same_on_every_backend(self, backend):
        with pytest.raises(ValueError, match='prob'):
            call(prob=2.0, backend=backend)

    def test_the_container_checks_too(self):
        with pytest.raises(ValueError, match='scale >= 0'):
            ej.JITCMatrix((0.0, -2.0), prob=0.1, seed=0, shape=(3, 3), law='normal')
        with pytest.raises(ValueError, match='todense'):
            ej.JITCMatrix(1.0, prob=0.1, seed=0, shape=(10**5, 10**5)).todense()
