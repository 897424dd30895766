"""csr_sddmm: (a @ b) at the stored entries only, on every backend, with its gradients."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from tests.kernels.dt2t.test_csr_dt2t import NNZ, M, N, entry_rows, structure, values

K = 5
BACKENDS = ej.get_registry()['csr_sddmm'].available_backends('cpu')


def want(a, b, indices, indptr):
    full = np.asarray(a, np.float64) @ np.asarray(b, np.float64)
    return full[entry_rows(indptr, indices.shape[0]), indices]


@pytest.mark.parametrize('backend', BACKENDS)
class TestEveryBackend:
    @pytest.mark.parametrize('dtype', [np.float32, np.float16])
    def test_values_are_the_dense_product_at_the_entries_eager_and_jitted(self, backend, dtype):
        indices, indptr = structure(50)
        a, b = values(51, (M, K), dtype), values(52, (K, N), dtype)
        f = lambda a, b: ej.csr_sddmm(a, b, indices, indptr, shape=(M, N), backend=backend)
        for got in (f(a, b), jax.jit(f)(a, b)):
            assert got.dtype == dtype
            np.testing.assert_allclose(got, want(a, b, indices, indptr), rtol=1e-3 if dtype == np.float16 else 1e-6)

    def test_gradients_are_the_masked_dense_ones(self, backend):
        indices, indptr = structure(53)
        a, b, ct = values(54, (M, K), np.float32), values(55, (K, N), np.float32), values(56, NNZ, np.float32)
        ga, gb = jax.grad(lambda a, b: jnp.sum(ej.csr_sddmm(a, b, indices, indptr, shape=(M, N),
                                                            backend=backend) * ct), argnums=(0, 1))(a, b)
        mask = np.zeros((M, N))
        np.add.at(mask, (entry_rows(indptr, NNZ), indices), ct)
        np.testing.assert_allclose(ga, mask @ b.T, rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(gb, a.T @ mask, rtol=1e-5, atol=1e-5)
        da = values(65, (M, K), np.float32)
        _, t = jax.jvp(lambda a: ej.csr_sddmm(a, b, indices, indptr, shape=(M, N), backend=backend), (a,), (da,))
        np.testing.assert_allclose(t, want(da, b, indices, indptr), rtol=1e-5)

    def test_empty_structure_bad_columns_and_vmap(self, backend):
        a, b = values(57, (M, K), np.float32), values(58, (K, N), np.float32)
        indices, indptr = structure(59, nnz=0)
        assert ej.csr_sddmm(a, b, indices, indptr, shape=(M, N), backend=backend).shape == (0,)
        got = ej.csr_sddmm(a[:2], b, np.array([0, 9, 1], np.int32), np.array([0, 2, 2], np.int32), shape=(2, N),
                           backend=backend, validate=False)
        np.testing.assert_allclose(got, [(a[0] @ b)[0], 0, 0], rtol=1e-6)
        indices, indptr = structure(60)
        got = jax.vmap(lambda a: ej.csr_sddmm(a, b, indices, indptr, shape=(M, N), backend=backend))(np.stack([a, -a]))
        np.testing.assert_allclose(got, [want(a, b, indices, indptr), want(-a, b, indices, indptr)], rtol=1e-6)


def test_the_container_method_keeps_the_structure_and_follows_the_view():
    dense = values(61, (M, N), np.float32) * (np.random.default_rng(62).random((M, N)) < 0.5)
    a, b = values(63, (M, K), np.float32), values(64, (K, N), np.float32)
    mask = dense != 0
    np.testing.assert_allclose(ej.CSR.fromdense(dense).sddmm(a, b).todense(), np.where(mask, a @ b, 0), rtol=1e-6)
    np.testing.assert_allclose(ej.CSC.fromdense(dense).sddmm(a, b).todense(), np.where(mask, a @ b, 0), rtol=1e-6)
    F = ej.FixedNumConn.from_csr(ej.CSR.fromdense(np.ones((M, 2), np.float32)))
    np.testing.assert_allclose(F.sddmm(a, b[:, :2]).todense(), a @ b[:, :2], rtol=1e-6)
