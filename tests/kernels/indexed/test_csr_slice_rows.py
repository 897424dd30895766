"""csr_slice_rows: chosen rows as a dense block, and its weight gradient, on every backend."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from tests.kernels.indexed.test_binary_csrmv_indexed import NNZ, M, N, dense, problem

BACKENDS = ej.get_registry()['csr_slice_rows'].available_backends('cpu')
ROWS = np.array([3, 0, 99, 3, -1, 8], np.int32)  # a repeat, and two rows outside [0, M)


def want_rows(data, indices, indptr, rows):
    A = dense(data, indices, indptr, None)
    return np.stack([A[r] if 0 <= r < M else np.zeros(N) for r in rows])


@pytest.mark.parametrize('backend', BACKENDS)
class TestEveryBackend:
    @pytest.mark.parametrize('homogeneous,long_row', [(False, False), (True, False), (False, True)])
    def test_the_block_is_the_dense_rows_eager_and_jitted(self, backend, homogeneous, long_row):
        data, indices, indptr, _ = problem(11, homogeneous=homogeneous, permuted=False, long_row=long_row)
        rows = ROWS if not long_row else np.array([M - 1, 0], np.int32)
        f = lambda d, r: ej.csr_slice_rows(d, indices, indptr, r, shape=(M, N), backend=backend)
        np.testing.assert_allclose(f(data, rows), want_rows(data, indices, indptr, rows), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(jax.jit(f)(data, rows), want_rows(data, indices, indptr, rows), rtol=1e-6,
                                   atol=1e-6)

    def test_a_scalar_row_gives_one_row(self, backend):
        data, indices, indptr, _ = problem(12, permuted=False)
        got = ej.csr_slice_rows(data, indices, indptr, 2, shape=(M, N), backend=backend)
        np.testing.assert_allclose(got, dense(data, indices, indptr, None)[2], rtol=1e-6, atol=1e-6)

    def test_the_weight_gradient_collects_the_cotangent_of_each_entry(self, backend):
        data, indices, indptr, _ = problem(13, permuted=False)
        ct = np.random.default_rng(0).integers(-4, 5, (ROWS.size, N)).astype(np.float32)
        loss = lambda d: jnp.sum(ej.csr_slice_rows(d, indices, indptr, ROWS, shape=(M, N), backend=backend) * ct)
        want = np.zeros(NNZ)
        for s, r in enumerate(ROWS):
            if 0 <= r < M:
                for k in range(indptr[r], indptr[r + 1]):
                    want[k] += ct[s, indices[k]]
        np.testing.assert_allclose(jax.jit(jax.grad(loss))(data), want, rtol=1e-6, atol=1e-6)
        hgrad = jax.grad(lambda w: jnp.sum(ej.csr_slice_rows(w, indices, indptr, ROWS, shape=(M, N),
                                                             backend=backend) * ct))(np.array([1.0], np.float32))
        np.testing.assert_allclose(hgrad, [want.sum()], rtol=1e-6)

    def test_float16_sums_in_float32(self, backend):
        data = np.full(NNZ, 1000.0, np.float16)
        indices, indptr = np.zeros(NNZ, np.int32), np.array([0] + [NNZ] * M, np.int32)
        got = ej.csr_slice_rows(data, indices, indptr, np.array([0], np.int32), shape=(M, N), backend=backend)
        assert got.dtype == jnp.float16 and float(got[0, 0]) == 30000.0

    def test_vmap_over_row_lists(self, backend):
        data, indices, indptr, _ = problem(14, permuted=False)
        rows = np.array([[0, 1], [8, 8]], np.int32)
        got = jax.vmap(lambda r: ej.csr_slice_rows(data, indices, indptr, r, shape=(M, N), backend=backend))(rows)
        np.testing.assert_allclose(got, [want_rows(data, indices, indptr, r) for r in rows], rtol=1e-6, atol=1e-6)


def test_bad_structure_is_named_before_any_kernel():
    data, indices, indptr, _ = problem(15, permuted=False)
    indices[0] = N
    with pytest.raises(ValueError, match=r'csr_slice_rows\(\): indices\[0\] = 6 is outside \[0, 6\)'):
        ej.csr_slice_rows(data, indices, indptr, np.array([0], np.int32), shape=(M, N))
