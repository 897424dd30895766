"""float64 weights and int64 indices (with JAX's 64-bit mode on) on every backend."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.csr.binary_csrmv import _binary_csrmv
from tests.kernels.cases import csr_dense, random_csr
from tests.kernels.conftest import backends_of


@pytest.mark.parametrize('transpose', [False, True])
@pytest.mark.parametrize('backend', backends_of(_binary_csrmv.primitive))
def test_float64_weights_with_int64_indices(backend, transpose):
    rng = np.random.default_rng(0)
    data, indices, indptr = random_csr(rng, 9, 7, dtype=np.float64, index_dtype=np.int64)
    v = rng.normal(size=9 if transpose else 7)
    dense = csr_dense(data, indices, indptr, (9, 7))
    want = (dense.T if transpose else dense) @ v
    with jax.enable_x64(True):
        args = (jnp.asarray(data), jnp.asarray(indices), jnp.asarray(indptr))
        assert args[1].dtype == jnp.int64
        got = ej.csrmv(*args, jnp.asarray(v), shape=(9, 7), transpose=transpose, backend=backend)
        events = ej.binary_csrmv(*args, jnp.asarray(v), shape=(9, 7), transpose=transpose, backend=backend)
        assert got.dtype == jnp.float64
    np.testing.assert_allclose(got, want, rtol=1e-12)
    np.testing.assert_allclose(events, (dense.T if transpose else dense) @ (v > 0), rtol=1e-12)
