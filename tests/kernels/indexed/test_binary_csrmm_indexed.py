"""binary_csrmm_indexed agrees with a dense NumPy product over the listed rows of an event matrix, on every backend."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from tests.kernels.indexed.test_binary_csrmv_indexed import NNZ, M, N, dense, problem, times

K = 3
BACKENDS = ej.get_registry()['binary_csrmm_indexed'].available_backends('cpu')


def events(seed, rows=M):
    B = np.random.default_rng(seed).random((rows, K)) < 0.4
    B[1] = False  # a listed row without an event adds nothing
    return B


def listed_product(ids, count, B, A):
    """Row i of B counts as often as it is listed among the first count slots."""
    return (times(ids, count, B.shape[0])[:, None] * B).T @ A


@pytest.mark.parametrize('backend', BACKENDS)
class TestEveryBackend:
    @pytest.mark.parametrize('homogeneous,permuted', [(False, True), (False, False), (True, True)])
    def test_listed_rows_give_the_dense_product_eager_and_jitted(self, backend, homogeneous, permuted):
        data, indices, indptr, perm = problem(1, homogeneous=homogeneous, permuted=permuted)
        B = events(1).astype(np.float32) * 2 - 0.5  # floats: > 0 are events, -0.5 is not
        ids, count = jnp.array([4, 0, 8, 4, 1, 99, -1, 2], jnp.int32), jnp.int32(7)  # 4 twice; 99, -1 ignored
        want = listed_product(ids, count, B > 0, dense(data, indices, indptr, perm)).T
        f = lambda d, i: ej.binary_csrmm_indexed(d, indices, indptr, perm, (i, count, B), shape=(M, N),
                                                  transpose=True, backend=backend)
        np.testing.assert_allclose(f(data, ids), want, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(jax.jit(f)(data, ids), want, rtol=1e-6, atol=1e-6)

    def test_a_row_longer_than_the_static_width_is_still_summed(self, backend):
        data, indices, indptr, perm = problem(2, long_row=True)
        B = np.zeros((M, K), bool)
        B[M - 1, [0, 2]] = True
        got = ej.binary_csrmm_indexed(data, indices, indptr, perm, B, shape=(M, N), transpose=True, backend=backend)
        want = np.outer(dense(data, indices, indptr, perm)[M - 1], [1, 0, 1])
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)

    def test_the_weight_gradient_sums_the_cotangent_over_event_columns(self, backend):
        data, indices, indptr, perm = problem(4)
        B = events(4)
        ids, count = ej.compact_events(B, M)
        ct = np.random.default_rng(4).normal(size=(N, K)).astype(np.float32)
        loss = lambda d: jnp.sum(ej.binary_csrmm_indexed(d, indices, indptr, perm, (ids, count, B), shape=(M, N),
                                                         transpose=True, backend=backend) * ct)
        want = np.zeros(NNZ)
        for i in range(M):
            for k in range(indptr[i], indptr[i + 1]):
                want[perm[k]] += ct[indices[k]] @ B[i]
        np.testing.assert_allclose(jax.jit(jax.grad(loss))(data), want, rtol=1e-5, atol=1e-5)

    def test_overflow_under_jit_makes_every_entry_nan(self, backend):
        data, indices, indptr, perm = problem(5)
        f = jax.jit(lambda B: ej.binary_csrmm_indexed(data, indices, indptr, perm, (*ej.compact_events(B, 2), B),
                                                      shape=(M, N), transpose=True, backend=backend))
        assert np.isnan(f(jnp.ones((M, K), bool))).all()
        assert not np.isnan(f(jnp.arange(M)[:, None] < jnp.array([[2, 0, 1]]))).any()

    def test_vmap_over_event_matrices(self, backend):
        data, indices, indptr, perm = problem(6)
        Bs = np.stack([events(6), events(7)])
        got = jax.vmap(lambda B: ej.binary_csrmm_indexed(data, indices, indptr, perm, B, shape=(M, N),
                                                         transpose=True, backend=backend))(Bs)
        A = dense(data, indices, indptr, perm)
        np.testing.assert_allclose(got, [(B.T.astype(float) @ A).T for B in Bs], rtol=1e-6, atol=1e-6)


def test_events_on_columns_give_the_dense_product():
    data, indices, indptr, perm = problem(7)
    B = events(7, rows=N)
    got = ej.binary_csrmm_indexed(data, indices, indptr, perm, B, shape=(M, N))
    np.testing.assert_allclose(got, dense(data, indices, indptr, perm) @ B, rtol=1e-6, atol=1e-6)


def test_compacting_an_event_matrix_lists_the_rows_with_an_event_in_any_column():
    ids, count = ej.compact_events(np.array([[0, 0], [0, 1], [2, 0], [-1, 0]]), 3)
    assert ids.tolist() == [1, 2, 4] and int(count) == 2


def test_a_wrong_event_matrix_height_names_the_side():
    data, indices, indptr, perm = problem(8)
    with pytest.raises(ValueError, match='B'):
        ej.binary_csrmm_indexed(data, indices, indptr, perm, np.ones((N, K), bool), shape=(M, N), transpose=True)
    with pytest.raises(TypeError, match=r'\(ids, count, B\)'):
        ej.binary_csrmm_indexed(data, indices, indptr, perm, (np.zeros(2, np.int32), 1), shape=(M, N),
                                transpose=True)
