"""Pallas per-synapse kernels (csr_dt2t, csr_sddmm), interpreted on the cpu, against NumPy and the jax backend."""

import jax
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.dt2t.csr_dt2t import _csr_dt2t
from eventjax.kernels.dt2t.csr_sddmm import _csr_sddmm
from tests.kernels.dt2t.test_csr_dt2t import NNZ, M, N, structure, values, want
from tests.kernels.dt2t.test_csr_sddmm import K
from tests.kernels.dt2t.test_csr_sddmm import want as want_sddmm


@pytest.fixture(autouse=True)
def _dt2t_pallas_registered(_pallas_registered):
    # The folder's fixture turned interpret mode on and restores the kernel tables afterwards.
    _csr_dt2t.register('pallas')
    _csr_sddmm.register('pallas')


@pytest.mark.parametrize('transpose', [False, True])
@pytest.mark.parametrize('kind', ['float32', 'float16', 'bool'])
def test_csr_dt2t_matches_numpy_and_jax(transpose, kind):
    indices, indptr = structure(70)
    size = N if transpose else M
    y = np.random.default_rng(71).random((2, size)) < 0.5 if kind == 'bool' else values(71, (2, size), kind)
    w = values(72, (2, NNZ), np.float16 if kind == 'float16' else np.float32)
    run = lambda backend: ej.csrmm_dt2t(y, w, indices, indptr, shape=(M, N), transpose=transpose, backend=backend)
    got = run('pallas')
    expected = np.where(want(y, np.ones_like(w), indices, indptr, transpose) > 0, w, 0) if kind == 'bool' else \
        want(y, w, indices, indptr, transpose)
    np.testing.assert_allclose(got, expected, rtol=1e-3 if kind == 'float16' else 1e-6)
    np.testing.assert_array_equal(got, run('jax'))


def test_csr_dt2t_bad_structure_under_jit_gives_zeros_and_grads_flow():
    indices, indptr = np.array([0, 9, 1, -1, 2, 3], np.int32), np.array([1, 3, 5], np.int32)
    y, w = np.array([1., 2., 3., 4.], np.float32), np.arange(1., 7., dtype=np.float32)
    f = jax.jit(lambda w: ej.csrmv_dt2t(y, w, indices, indptr, shape=(2, 4), transpose=True, backend='pallas',
                                        validate=False))
    np.testing.assert_array_equal(f(w), [0, 0, 6, 0, 15, 0])
    np.testing.assert_array_equal(jax.grad(lambda w: f(w).sum())(w), [0, 0, 2, 0, 3, 0])


def test_csr_sddmm_matches_numpy_and_jax():
    indices, indptr = structure(73)
    a, b = values(74, (M, K), np.float32), values(75, (K, N), np.float32)
    got = ej.csr_sddmm(a, b, indices, indptr, shape=(M, N), backend='pallas')
    np.testing.assert_allclose(got, want_sddmm(a, b, indices, indptr), rtol=1e-6)
    np.testing.assert_allclose(got, ej.csr_sddmm(a, b, indices, indptr, shape=(M, N), backend='jax'), rtol=1e-6)
