"""The pallas kernels of the compact event forms (interpret mode on the cpu) against a dense NumPy product."""

import jax
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.common.operator import register_backend
from eventjax.kernels.indexed import binary_csrmm_indexed, binary_csrmv_indexed, binary_csrmv_packed, csr_slice_rows
from tests.kernels.indexed.test_binary_csrmv_indexed import M, N, dense, problem

MODULES = (binary_csrmv_indexed, binary_csrmm_indexed, binary_csrmv_packed, csr_slice_rows)


@pytest.fixture(autouse=True)
def _indexed_registered():
    # The folder's fixture has interpret mode on and restores the tables afterwards.
    for fn in MODULES:
        register_backend(ej.get_registry()[fn.__name__], 'eventjax.kernels.indexed', fn.__name__, 'pallas')


def test_index_lists_vector_and_matrix():
    data, indices, indptr, perm = problem(1)
    A = dense(data, indices, indptr, perm)
    ids, count = np.array([4, 0, 8, 4, 99, -1, 2], np.int32), np.int32(6)
    t = np.zeros(M)
    for i in ids[:6]:
        if 0 <= i < M:
            t[i] += 1
    got = ej.binary_csrmv_indexed(data, indices, indptr, perm, (ids, count), shape=(M, N), transpose=True,
                                  backend='pallas')
    np.testing.assert_allclose(got, t @ A, rtol=1e-5, atol=1e-5)
    B = np.random.default_rng(1).random((M, 3)) < 0.5
    got = jax.jit(lambda d: ej.binary_csrmm_indexed(d, indices, indptr, perm, B, shape=(M, N), transpose=True,
                                                    backend='pallas'))(data)
    np.testing.assert_allclose(got, A.T @ B, rtol=1e-5, atol=1e-5)


def test_row_slices():
    data, indices, indptr, _ = problem(2, permuted=False)
    got = ej.csr_slice_rows(data, indices, indptr, np.array([3, -1, 0], np.int32), shape=(M, N), backend='pallas')
    A = dense(data, indices, indptr, None)
    np.testing.assert_allclose(got, [A[3], np.zeros(N), A[0]], rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('transpose', [True, False])
def test_packed_words_both_directions(transpose):
    data, indices, indptr, _ = problem(3, permuted=False)
    A = dense(data, indices, indptr, None)
    s = np.random.default_rng(3).random(M if transpose else N) < 0.4
    got = ej.binary_csrmv_packed(data, indices, indptr, ej.bitpack(s), shape=(M, N), transpose=transpose,
                                 backend='pallas')
    np.testing.assert_allclose(got, s @ A if transpose else A @ s, rtol=1e-5, atol=1e-5)
