"""The TPU kernels, interpreted, with ``jax_enable_x64`` on: structure
given as int32 or int64, results equal the ``jax`` kernel's."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from tests.kernels.pallas.tpu_interpret import BACKEND, tpu_kernels_on_cpu


@pytest.fixture(autouse=True, scope='module')
def _tpu_kernels():
    with tpu_kernels_on_cpu():
        yield


def _problem(index_dtype, m=9, n=11):
    rng = np.random.default_rng(3)
    lengths = rng.integers(0, n + 1, m)
    indptr = np.concatenate([[0], np.cumsum(lengths)])
    indices = np.concatenate([np.sort(rng.choice(n, k, replace=False)) for k in lengths])
    data = rng.normal(size=indices.shape[0]).astype(np.float32)
    return (jnp.asarray(data), jnp.asarray(indices, index_dtype), jnp.asarray(indptr, index_dtype),
            jnp.asarray(rng.random(m) < 0.5), jnp.asarray(rng.random(n) < 0.5), rng)


def _calls(index_dtype):
    data, indices, indptr, pre, post, rng = _problem(index_dtype)
    m, n = pre.shape[0], post.shape[0]
    trace_pre = jnp.asarray(rng.normal(size=m), jnp.float32)
    trace_post = jnp.asarray(rng.normal(size=n), jnp.float32)
    delays = jnp.asarray(rng.integers(1, 4, data.shape[0]), index_dtype)
    rows, col_ptr, pos = ej.csr_column_view(indices, indptr, shape=(m, n))
    fcn_idx = jnp.asarray(rng.integers(0, n, (m, 3)), index_dtype)
    fcn_w = jnp.asarray(rng.normal(size=(m, 3)), jnp.float32)
    dense = jnp.asarray(rng.normal(size=(m, n)), jnp.float32)
    return {
        'binary_fcnmv s@W': lambda b: ej.binary_fcnmv(fcn_w, fcn_idx, pre, shape=(m, n), transpose=True, backend=b),
        'binary_fcnmv W@s': lambda b: ej.binary_fcnmv(fcn_w, fcn_idx, post, shape=(m, n), transpose=False,
                                                      backend=b),
        'dense_on_pre': lambda b: ej.dense_on_pre(dense, pre, trace_post, backend=b),
        'dense_on_post': lambda b: ej.dense_on_post(dense, trace_pre, post, backend=b),
        'fcn_on_pre': lambda b: ej.fcn_on_pre(fcn_w, fcn_idx, pre, trace_post, shape=(m, n), backend=b),
        'binary_csrmv': lambda b: ej.binary_csrmv(data, indices, indptr, pre, shape=(m, n), transpose=True, backend=b),
        'csr_on_pre': lambda b: ej.csr_on_pre(data, indices, indptr, pre, trace_post, shape=(m, n), backend=b),
        'csr2csc_on_post': lambda b: ej.csr2csc_on_post(data, rows, col_ptr, pos,
                                                        trace_pre, post, shape=(m, n), backend=b),
        'csr_delay_deliver': lambda b: ej.csr_delay_deliver(jnp.zeros((4, n), jnp.float32), pre, data, indices,
                                                            indptr, delays, 2, shape=(m, n), backend=b),
    }


@pytest.mark.parametrize('index_dtype', ['int32', 'int64'])
@pytest.mark.parametrize('op', sorted(_calls(jnp.int32)))
def test_tpu_kernels_match_jax_under_x64(op, index_dtype):
    with jax.enable_x64(True):
        f = _calls(index_dtype)[op]
        np.testing.assert_allclose(f(BACKEND), f('jax'), rtol=1e-6, atol=1e-6)
