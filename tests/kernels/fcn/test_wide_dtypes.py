"""float64 weights and int64 indices (with JAX's 64-bit mode on) on every backend, mv and mm."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.fcn.fcnmv import _fcnmv
from tests.kernels.conftest import backends_of
from tests.kernels.fcn.suite import fcn_dense, random_fcn


@pytest.mark.parametrize('transpose', [False, True])
@pytest.mark.parametrize('backend', backends_of(_fcnmv.primitive))
def test_float64_weights_with_int64_indices(backend, transpose):
    rng = np.random.default_rng(0)
    weights, indices = random_fcn(rng, 9, 7, 3, dtype=np.float64, index_dtype=np.int64)
    v = rng.normal(size=9 if transpose else 7)
    B = rng.normal(size=(9 if transpose else 7, 2))
    dense = fcn_dense(weights, indices, (9, 7))
    op = dense.T if transpose else dense
    with jax.enable_x64(True):
        w, idx = jnp.asarray(weights), jnp.asarray(indices)
        assert idx.dtype == jnp.int64
        kw = dict(shape=(9, 7), transpose=transpose, backend=backend)
        got = ej.fcnmv(w, idx, jnp.asarray(v), **kw)
        events = ej.binary_fcnmv(w, idx, jnp.asarray(v), **kw)
        mm = ej.fcnmm(w, idx, jnp.asarray(B), **kw)
        binary_mm = ej.binary_fcnmm(w, idx, jnp.asarray(B), **kw)
        assert got.dtype == mm.dtype == jnp.float64
    np.testing.assert_allclose(got, op @ v, rtol=1e-12)
    np.testing.assert_allclose(events, op @ (v > 0), rtol=1e-12)
    np.testing.assert_allclose(mm, op @ B, rtol=1e-12)
    np.testing.assert_allclose(binary_mm, op @ (B > 0), rtol=1e-12)
