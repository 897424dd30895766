"""Pallas dense kernels, interpreted on the cpu, against NumPy, jax and numba."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from tests.kernels.cases import indicator, random_events
from tests.kernels.pallas.helpers import assert_matches, assert_same_as_backends

# (m, n, columns or None for mv, transpose, dtype, event kind)
CASES = [
    (0, 3, None, False, np.float32, 'bool'),
    (3, 0, 2, True, np.float32, 'bool'),
    (1, 1, None, False, np.float16, 'all'),
    (1, 1, 1, True, np.float32, 'float'),
    (20, 33, None, False, np.float32, 'float'),
    (20, 33, None, True, np.float16, 'bool'),
    (17, 9, 3, False, np.float16, 'float'),
    (17, 9, 3, True, np.float32, 'bool'),
]


def _call(weights, spikes, cols, transpose, backend):
    fn = ej.binary_densemv if cols is None else ej.binary_densemm
    return fn(weights, spikes, transpose=transpose, backend=backend)


@pytest.mark.parametrize('m, n, cols, transpose, dtype, kind', CASES)
def test_matches_numpy_and_other_backends(m, n, cols, transpose, dtype, kind):
    """Each case equals the dense product of the weights with the event indicator, and jax and numba."""
    rng = np.random.default_rng(m * 100 + n)
    weights = rng.normal(size=(m, n)).astype(dtype)
    spikes = random_events(rng, ((m if transpose else n),) + (() if cols is None else (cols,)), kind)
    w, s = jnp.asarray(weights), jnp.asarray(spikes)
    result = _call(w, s, cols, transpose, 'pallas')
    assert result.dtype == dtype
    dense = np.asarray(weights, np.float64)
    assert_matches(result, (dense.T if transpose else dense) @ indicator(spikes), dtype)
    assert_same_as_backends(lambda b: _call(w, s, cols, transpose, b), result, dtype)


def test_nan_weight_of_a_non_event_contributes_nothing():
    """A NaN weight in a column without an event leaves the product finite (select, not multiply)."""
    weights = jnp.array([[jnp.nan, 1.0], [2.0, jnp.inf]], jnp.float32)
    spikes = jnp.array([False, True])
    np.testing.assert_array_equal(ej.binary_densemv(weights, spikes, backend='pallas'), [1.0, jnp.inf])
    np.testing.assert_array_equal(ej.binary_densemv(weights, jnp.array([False, True]), transpose=True,
                                                    backend='pallas'), [2.0, jnp.inf])


def test_jit_vmap_and_grad():
    """Under jit, vmap over a batch of event vectors, and grad w.r.t. the weights, pallas equals jax."""
    rng = np.random.default_rng(0)
    weights = jnp.asarray(rng.normal(size=(20, 33)).astype(np.float32))
    batch = jnp.asarray(rng.random((2, 33)) < 0.5)

    def run(backend):
        return jax.jit(jax.vmap(lambda s: ej.binary_densemv(weights, s, backend=backend)))(batch)

    np.testing.assert_allclose(run('pallas'), run('jax'), rtol=1e-5, atol=1e-5)

    def loss(w, backend):
        return ej.binary_densemv(w, batch[0], transpose=False, backend=backend).sum()

    np.testing.assert_allclose(jax.grad(loss)(weights, 'pallas'), jax.grad(loss)(weights, 'jax'))
