"""Pallas CSR kernels, interpreted on the cpu, against NumPy, jax and numba."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from tests.kernels.cases import as_jnp, csr_dense, indicator, random_csr, random_events
from tests.kernels.pallas.helpers import assert_matches, assert_same_as_backends

# (operator, m, n, columns or None for mv, transpose, dtype, homogeneous, event kind or 'x' for floats)
CASES = [
    ('binary_csrmv', 0, 4, None, False, np.float32, False, 'bool'),
    ('binary_csrmv', 4, 0, None, True, np.float32, False, 'bool'),
    ('binary_csrmv', 1, 1, None, False, np.float16, True, 'all'),
    ('binary_csrmv', 12, 9, None, False, np.float32, False, 'float'),
    ('binary_csrmv', 12, 9, None, True, np.float16, False, 'bool'),
    ('binary_csrmv', 12, 9, None, True, np.float32, True, 'float'),
    ('csrmv', 1, 1, None, True, np.float32, False, 'x'),
    ('csrmv', 12, 9, None, False, np.float16, True, 'x'),
    ('csrmv', 12, 9, None, True, np.float32, False, 'x'),
    ('binary_csrmm', 12, 9, 3, False, np.float32, True, 'bool'),
    ('binary_csrmm', 12, 9, 3, True, np.float16, False, 'float'),
    ('csrmm', 12, 9, 2, False, np.float32, False, 'x'),
    ('csrmm', 12, 9, 2, True, np.float16, True, 'x'),
]


def _operand(rng, shape, kind, dtype):
    if kind == 'x':
        return rng.normal(size=shape).astype(dtype)
    return random_events(rng, shape, kind)


@pytest.mark.parametrize('op, m, n, cols, transpose, dtype, homogeneous, kind', CASES)
def test_matches_numpy_and_other_backends(op, m, n, cols, transpose, dtype, homogeneous, kind):
    """Each case equals the dense product of the stored matrix, and the jax and numba backends."""
    rng = np.random.default_rng(m * 100 + n)
    data, indices, indptr = random_csr(rng, m, n, dtype=dtype, homogeneous=homogeneous)
    x = _operand(rng, ((m if transpose else n),) + (() if cols is None else (cols,)), kind, dtype)
    fn = getattr(ej, op)
    args = as_jnp(data, indices, indptr, x)
    run = lambda backend: fn(*args, shape=(m, n), transpose=transpose, backend=backend)  # noqa: E731
    result = run('pallas')
    assert result.dtype == dtype
    dense = csr_dense(data, indices, indptr, (m, n))
    operand = np.asarray(x, np.float64) if kind == 'x' else indicator(x)
    assert_matches(result, (dense.T if transpose else dense) @ operand, dtype)
    assert_same_as_backends(run, result, dtype)


@pytest.mark.parametrize('transpose', [False, True])
def test_nan_weights_of_non_events_contribute_nothing_but_float_products_are_ieee(transpose):
    """binary_csrmv skips the NaN weight of a non-event; csrmv gives NaN * 0 = NaN there."""
    data, indices, indptr = jnp.array([jnp.nan, 1.0, 2.0]), jnp.array([0, 1, 1]), jnp.array([0, 2, 3])
    spikes = jnp.array([False, True])
    got = ej.binary_csrmv(data, indices, indptr, spikes, shape=(2, 2), transpose=transpose, backend='pallas')
    np.testing.assert_array_equal(got, [0.0, 2.0] if transpose else [1.0, 2.0])
    got = ej.csrmv(data, indices, indptr, jnp.array([0.0, 1.0]), shape=(2, 2), transpose=transpose,
                   backend='pallas')
    np.testing.assert_array_equal(got, [jnp.nan, 2.0])


@pytest.mark.parametrize('transpose', [False, True])
def test_traced_out_of_range_columns_are_dropped(transpose):
    """Under jit (no validation) a column outside [0, n), negative included, contributes nothing."""
    data, indices, indptr = jnp.array([1.0, 2.0, 4.0, 8.0]), jnp.array([0, -1, 3, 1]), jnp.array([0, 2, 4])
    x = jnp.ones(2 if transpose else 3)
    f = jax.jit(lambda d, i, p, v: ej.binary_csrmv(d, i, p, v, shape=(2, 3), transpose=transpose,
                                                    backend='pallas'))
    np.testing.assert_array_equal(f(data, indices, indptr, x), [1.0, 8.0, 0.0] if transpose else [1.0, 8.0])


def test_jit_vmap_and_grad():
    """Under jit, vmap over events, and grad w.r.t. the weights and the vector, pallas equals jax."""
    rng = np.random.default_rng(1)
    data, indices, indptr = as_jnp(*random_csr(rng, 12, 9))
    batch = jnp.asarray(rng.random((2, 9)) < 0.5)

    def run(backend):
        f = lambda s: ej.binary_csrmv(data, indices, indptr, s, shape=(12, 9), backend=backend)  # noqa: E731
        return jax.jit(jax.vmap(f))(batch)

    np.testing.assert_allclose(run('pallas'), run('jax'), rtol=1e-5, atol=1e-5)
    v = jnp.asarray(rng.normal(size=9).astype(np.float32))

    def loss(d, x, backend):
        return jnp.sum(jnp.sin(ej.csrmv(d, indices, indptr, x, shape=(12, 9), backend=backend)))

    for got, want in zip(jax.grad(loss, (0, 1))(data, v, 'pallas'), jax.grad(loss, (0, 1))(data, v, 'jax')):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('transpose', [False, True])
def test_traced_indptr_past_the_entries_reads_only_the_stored_ones(transpose):
    """Under jit an indptr ending past len(indices) gives the row the stored entries only."""
    data, indices, indptr = jnp.array([1.0, 2.0, 4.0]), jnp.array([0, 1, 1]), jnp.array([0, 5])
    x = jnp.ones(1 if transpose else 2, bool)
    f = jax.jit(lambda p: ej.binary_csrmv(data, indices, p, x, shape=(1, 2), transpose=transpose,
                                          backend='pallas'))
    np.testing.assert_array_equal(f(indptr), [1.0, 6.0] if transpose else [7.0])
