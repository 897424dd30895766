"""Pallas FCN kernels, interpreted on the cpu, against NumPy, jax and numba."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from tests.kernels.cases import as_jnp, indicator, random_events
from tests.kernels.fcn.suite import fcn_dense, random_fcn
from tests.kernels.pallas.helpers import assert_matches, assert_same_as_backends

# (operator, m, n, k, columns or None for mv, transpose, dtype, homogeneous, event kind or 'x' for floats)
CASES = [
    ('binary_fcnmv', 0, 4, 3, None, False, np.float32, False, 'bool'),
    ('binary_fcnmv', 5, 4, 0, None, True, np.float32, False, 'bool'),
    ('binary_fcnmv', 1, 1, 1, None, False, np.float16, True, 'all'),
    ('binary_fcnmv', 10, 7, 4, None, False, np.float32, False, 'float'),
    ('binary_fcnmv', 10, 7, 4, None, True, np.float16, True, 'bool'),
    ('fcnmv', 10, 7, 4, None, False, np.float16, False, 'x'),
    ('fcnmv', 10, 7, 4, None, True, np.float32, True, 'x'),
    ('binary_fcnmm', 10, 7, 4, 3, False, np.float32, True, 'bool'),
    ('binary_fcnmm', 10, 7, 4, 3, True, np.float16, False, 'float'),
    ('fcnmm', 10, 7, 4, 2, True, np.float32, False, 'x'),
]


@pytest.mark.parametrize('op, m, n, k, cols, transpose, dtype, homogeneous, kind', CASES)
def test_matches_numpy_and_other_backends(op, m, n, k, cols, transpose, dtype, homogeneous, kind):
    """Each case equals the dense product of the connections, and the jax and numba backends."""
    rng = np.random.default_rng(m * 100 + n * 10 + k)
    weights, indices = random_fcn(rng, m, n, k, dtype=dtype, homogeneous=homogeneous)
    shape = ((m if transpose else n),) + (() if cols is None else (cols,))
    x = rng.normal(size=shape).astype(dtype) if kind == 'x' else random_events(rng, shape, kind)
    fn = getattr(ej, op)
    args = as_jnp(weights, indices, x)
    run = lambda backend: fn(*args, shape=(m, n), transpose=transpose, backend=backend)  # noqa: E731
    result = run('pallas')
    assert result.dtype == dtype
    dense = fcn_dense(weights, indices, (m, n))
    operand = np.asarray(x, np.float64) if kind == 'x' else indicator(x)
    assert_matches(result, (dense.T if transpose else dense) @ operand, dtype)
    assert_same_as_backends(run, result, dtype)


@pytest.mark.parametrize('transpose', [False, True])
def test_traced_out_of_range_indices_are_dropped_and_nan_non_events_skipped(transpose):
    """Under jit an index outside [0, n) contributes nothing; a NaN weight without an event neither."""
    weights = jnp.array([[1.0, 2.0], [jnp.nan, 8.0]])
    indices = jnp.array([[0, -1], [1, 2]])
    x = jnp.array([True, False]) if transpose else jnp.array([True, False])
    f = jax.jit(lambda w, i, s: ej.binary_fcnmv(w, i, s, shape=(2, 2), transpose=transpose, backend='pallas'))
    np.testing.assert_array_equal(f(weights, indices, x), [1.0, 0.0] if transpose else [1.0, 0.0])


def test_jit_vmap_and_grad():
    """Under jit, vmap over events, and grad w.r.t. the weights and the vector, pallas equals jax."""
    rng = np.random.default_rng(2)
    weights, indices = as_jnp(*random_fcn(rng, 10, 7, 4))
    batch = jnp.asarray(rng.random((2, 10)) < 0.5)

    def run(backend):
        f = lambda s: ej.binary_fcnmv(weights, indices, s, shape=(10, 7), transpose=True,  # noqa: E731
                                      backend=backend)
        return jax.jit(jax.vmap(f))(batch)

    np.testing.assert_allclose(run('pallas'), run('jax'), rtol=1e-5, atol=1e-5)
    v = jnp.asarray(rng.normal(size=7).astype(np.float32))

    def loss(w, x, backend):
        return jnp.sum(jnp.sin(ej.fcnmv(w, indices, x, shape=(10, 7), backend=backend)))

    for got, want in zip(jax.grad(loss, (0, 1))(weights, v, 'pallas'), jax.grad(loss, (0, 1))(weights, v, 'jax')):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
