"""The pallas plasticity kernels (interpret mode on the cpu) through the suite every backend passes, and for cuda."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.plasticity.csr2csc_on_post import _csr2csc_on_post
from eventjax.kernels.plasticity.csr_on_pre import _csr_on_pre
from eventjax.kernels.plasticity.dense_on_post import _dense_on_post
from eventjax.kernels.plasticity.dense_on_pre import _dense_on_pre
from eventjax.kernels.plasticity.fcn_on_pre import _fcn_on_pre
from tests.kernels.plasticity import test_updates as suites

UPDATES = (_csr_on_pre, _csr2csc_on_post, _dense_on_pre, _dense_on_post, _fcn_on_pre)


@pytest.fixture(autouse=True)
def _updates_registered():
    for update in UPDATES:
        update.register('pallas')  # the folder's fixture has interpret mode on and restores the tables


@pytest.fixture
def backend():
    return 'pallas'


# The NumPy loop, bounds on touched entries only, donation without a copy of the weights, no events,
# NaN traces, vmap and grad: what the jax, numba and warp kernels pass (prim=None: no backend parametrization).
class TestCsrOnPre(suites.TestCsrOnPre):
    prim = None


class TestCsr2CscOnPost(suites.TestCsr2CscOnPost):
    prim = None


class TestDenseOnPre(suites.TestDenseOnPre):
    prim = None


class TestDenseOnPost(suites.TestDenseOnPost):
    prim = None


class TestFcnOnPre(suites.TestFcnOnPre):
    prim = None


def test_unvalidated_bad_entries_are_skipped():
    """Columns out of range in traced structure are dropped, as on every backend."""
    out = jax.jit(lambda i: ej.csr_on_pre(jnp.zeros(3), i, np.array([0, 3]), np.array([True]), np.ones(3, np.float32),
                                          shape=(1, 3), backend='pallas'))(jnp.array([0, 7, 2]))
    np.testing.assert_array_equal(np.asarray(out), [1.0, 0.0, 1.0])


def _cuda_text(fn, w):
    return jax.jit(fn).trace(w).lower(lowering_platforms=('cuda',)).as_text()


def test_every_update_lowers_to_one_aliased_triton_call_on_cuda():
    """On cuda each update is one Triton kernel whose output is its weight operand (no copy, no atomics)."""
    idx, ptr = np.array([0, 1, 1], np.int32), np.array([0, 2, 3], np.int32)
    rows, col_ptr, pos = ej.csr_column_view(idx, ptr, shape=(2, 2))
    pre, post, trace = np.array([True, False]), np.array([False, True]), np.array([.1, .2], np.float32)
    calls = [
        (lambda w: ej.csr_on_pre(w, idx, ptr, pre, trace, 0.0, 1.0, shape=(2, 2), backend='pallas'), jnp.ones(3)),
        (lambda w: ej.csr2csc_on_post(w, rows, col_ptr, pos, trace, post, shape=(2, 2), backend='pallas'),
         jnp.ones(3)),
        (lambda w: ej.dense_on_pre(w, pre, trace, backend='pallas'), jnp.ones((2, 2))),
        (lambda w: ej.dense_on_post(w, trace, post, backend='pallas'), jnp.ones((2, 2))),
        (lambda w: ej.fcn_on_pre(w, idx.reshape(3, 1)[:2], pre, trace, shape=(2, 2), backend='pallas'),
         jnp.ones((2, 1))),
    ]
    for fn, w in calls:
        text = _cuda_text(fn, w)
        assert text.count('xla.gpu.triton') == 1
        assert 'output_operand_aliases' in text
        assert 'atomic_rmw' not in text


@pytest.mark.skipif(jax.default_backend() not in ('gpu', 'cuda'), reason='needs a GPU (compiled Triton kernels)')
def test_compiled_on_the_gpu_matches_jax():
    """The compiled Triton kernels give what the jax backend gives."""
    rng = np.random.default_rng(0)
    w = jnp.asarray(rng.random((300, 40), np.float32))
    pre, trace = rng.random(300) < 0.1, jnp.asarray(rng.standard_normal(40).astype(np.float32))
    got = ej.dense_on_pre(w, pre, trace, 0.0, 1.0, backend='pallas')
    np.testing.assert_allclose(np.asarray(got), np.asarray(ej.dense_on_pre(w, pre, trace, 0.0, 1.0, backend='jax')))
