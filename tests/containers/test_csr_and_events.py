"""CSR and EventArray: pytrees whose `@` routes to the standard operators."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej

DENSE = np.array([[0.0, 2.0, 0.0], [3.0, 0.0, 4.0], [0.0, 0.0, 0.0], [1.0, 1.0, 0.0]], np.float32)


@pytest.fixture
def A():
    return ej.CSR.fromdense(DENSE)


def events(n, *shape):
    return np.random.default_rng(n).random((*shape, n) if shape else n) < 0.5


class TestCSR:
    def test_fromdense_todense_round_trip(self, A):
        np.testing.assert_array_equal(A.todense(), DENSE)
        assert A.shape == (4, 3)

    def test_transpose_is_a_lazy_view(self, A):
        assert A.T.data is A.data and A.T.shape == (3, 4)
        np.testing.assert_array_equal(A.T.todense(), DENSE.T)
        assert A.T.T.transposed is False

    def test_is_a_pytree(self, A):
        leaves, tree = jax.tree.flatten(A.T)
        back = jax.tree.unflatten(tree, leaves)
        assert back.shape == (3, 4) and len(leaves) == 3
        f = jax.jit(lambda M, v: M @ v)
        np.testing.assert_allclose(f(A, jnp.ones(3)), DENSE @ np.ones(3))

    def test_grad_flows_into_the_data(self, A):
        g = jax.grad(lambda M: (M @ jnp.ones(3)).sum(), allow_int=True)(A)
        np.testing.assert_allclose(g.data, np.ones(5))

    def test_validate_accepts_good_structure(self, A):
        assert A.validate() is A

    @pytest.mark.parametrize('indices, indptr, message', [
        ([0, 5], [0, 1, 2], r'indices\[1\] = 5 is outside \[0, 3\)'),
        ([0, -1], [0, 1, 2], r'indices\[1\] = -1 is outside'),
        ([0, 1], [0, 2, 1], 'indptr must never decrease'),
        ([0, 1], [1, 1, 2], r'indptr\[0\] must be 0'),
        ([0, 1], [0, 1, 3], r'indptr\[-1\] = 3 is past the end of indices'),
    ])
    def test_construction_and_validate_name_bad_structure(self, indices, indptr, message):
        args = (jnp.ones(2), jnp.array(indices), jnp.array(indptr))
        with pytest.raises(ValueError, match='CSR\\(\\): ' + message):
            ej.CSR(args, shape=(2, 3))
        M = ej.CSR(args, shape=(2, 3), validate=False)
        with pytest.raises(ValueError, match=r'CSR\.validate\(\): ' + message):
            M.validate()

    def test_trusted_structure_skips_the_check_and_products_drop_bad_entries(self):
        M = ej.CSR((jnp.ones(2), jnp.array([0, 5]), jnp.array([0, 1, 2])), shape=(2, 3), validate=False)
        np.testing.assert_array_equal(M @ jnp.ones(3), [1.0, 0.0])

    def test_traced_structure_is_not_checked_at_construction(self):
        f = jax.jit(lambda i: ej.CSR((jnp.ones(2), i, jnp.array([0, 1, 2])), shape=(2, 3)) @ jnp.ones(3))
        np.testing.assert_array_equal(f(jnp.array([0, 5])), [1.0, 0.0])


class TestMatmulRouting:
    def test_csr_times_events_is_binary_csrmv(self, A):
        s = events(3)
        np.testing.assert_allclose(A @ ej.EventArray(s), DENSE @ s)

    def test_events_times_csr_is_the_transposed_product(self, A):
        s = events(4)
        np.testing.assert_allclose(ej.EventArray(s) @ A, s @ DENSE)
        jaxpr = str(jax.make_jaxpr(lambda e: e @ A)(ej.EventArray(s)))
        assert 'binary_csrmv[' in jaxpr and 'transpose=True' in jaxpr

    def test_transposed_view_flips_the_direction(self, A):
        s = events(4)
        np.testing.assert_allclose(A.T @ ej.EventArray(s), DENSE.T @ s)
        np.testing.assert_allclose(ej.EventArray(events(3)) @ A.T, events(3) @ DENSE.T)

    def test_csr_times_array_is_csrmv(self, A):
        v = np.arange(3, dtype=np.float32)
        np.testing.assert_allclose(A @ jnp.asarray(v), DENSE @ v)
        np.testing.assert_allclose(jnp.arange(4.0) @ A, np.arange(4.0) @ DENSE)

    def test_matrices_route_to_mm(self, A):
        B = np.random.default_rng(0).normal(size=(3, 2)).astype(np.float32)
        np.testing.assert_allclose(A @ jnp.asarray(B), DENSE @ B, rtol=1e-6)
        np.testing.assert_allclose(jnp.asarray(B.T) @ A.T, B.T @ DENSE.T, rtol=1e-6)
        S = events(3, 2).T  # (3, 2)
        np.testing.assert_allclose(A @ ej.EventArray(S), DENSE @ S)
        np.testing.assert_allclose(ej.EventArray(S.T) @ A.T, S.T @ DENSE.T)
        jaxpr = str(jax.make_jaxpr(lambda e: e @ A)(ej.EventArray(events(4, 2))))
        assert 'binary_csrmm[' in jaxpr

    def test_dense_weights_work_the_same_way(self):
        W = jnp.asarray(DENSE)
        s4, s3 = events(4), events(3)
        np.testing.assert_allclose(ej.EventArray(s4) @ W, s4 @ DENSE)
        np.testing.assert_allclose(W @ ej.EventArray(s3), DENSE @ s3)
        S = events(4, 2)  # (2, 4)
        np.testing.assert_allclose(ej.EventArray(S) @ W, S @ DENSE)
        np.testing.assert_allclose(W @ ej.EventArray(S.T[:3]), DENSE @ S.T[:3])

    def test_a_numpy_matrix_times_events_defers_to_the_events(self):
        s3 = events(3)
        np.testing.assert_allclose(DENSE @ ej.EventArray(s3), DENSE @ s3)
        x = np.array([1.0, 0.0, -2.0], np.float32)
        np.testing.assert_allclose(DENSE @ ej.GradedEvents(x), DENSE @ x)

    def test_float_events_count_where_positive(self, A):
        s = np.array([0.5, -1.0, 0.0, 2.0], np.float32)
        np.testing.assert_allclose(ej.EventArray(s) @ A, (s > 0) @ DENSE)

    def test_matmul_follows_the_global_backend(self, A):
        s = ej.EventArray(events(4))
        with ej.config.override(cpu='jax'):
            jaxpr = str(jax.make_jaxpr(lambda e: e @ A)(s))
        assert 'jax@cpu' in jaxpr

    def test_event_array_is_a_pytree(self):
        s = ej.EventArray(events(3))
        out = jax.vmap(lambda e: jnp.asarray(DENSE) @ e)(ej.EventArray(np.stack([events(3), events(3)])))
        assert out.shape == (2, 4)
        assert jax.tree.leaves(s)[0].shape == (3,)


class TestTodense:
    def test_duplicates_add_up_and_a_scalar_weight_is_shared(self):
        M = ej.CSR((jnp.float32(2.0), jnp.array([1, 1, 0]), jnp.array([0, 2, 3])), shape=(2, 3))
        np.testing.assert_array_equal(M.todense(), [[0, 4, 0], [2, 0, 0]])

    def test_empty_matrices(self):
        assert ej.CSR.fromdense(np.zeros((0, 3), np.float32)).todense().shape == (0, 3)
        np.testing.assert_array_equal(ej.CSR.fromdense(np.zeros((2, 3), np.float32)).todense(), np.zeros((2, 3)))


def coo_dense(coo):
    """Densify a COO by its definition, ``dense[row[i], col[i]] += data[i]``."""
    dense = np.zeros(coo.shape, np.float64)
    np.add.at(dense, (np.asarray(coo.row), np.asarray(coo.col)), np.asarray(coo.data, np.float64))
    return dense


# Unchecked structure, each with what the products make of it (their dense matrix, A @ eye).
UNCHECKED = {
    'padding past indptr[-1]': ((jnp.array([1.0, 2.0, 5.0]), jnp.array([0, 1, 2]), jnp.array([0, 1, 2])),
                                [[1, 0, 0], [0, 2, 0]]),
    'column -1': ((jnp.array([1.0, 2.0, 5.0]), jnp.array([0, -1, 2]), jnp.array([0, 1, 3])),
                  [[1, 0, 0], [0, 0, 5]]),
    'column n': ((jnp.array([1.0, 2.0, 5.0]), jnp.array([0, 3, 2]), jnp.array([0, 1, 3])),
                 [[1, 0, 0], [0, 0, 5]]),
    'decreasing indptr': ((jnp.array([1.0, 2.0, 5.0]), jnp.array([0, 1, 2]), jnp.array([0, 3, 1])),
                          [[1, 2, 5], [0, 0, 0]]),
}


class TestConversionsMatchTheProducts:
    """todense and tocoo drop and repair unchecked structure exactly as the products do."""

    @pytest.mark.parametrize('case', list(UNCHECKED))
    def test_todense_is_the_product_with_the_identity(self, case):
        args, expected = UNCHECKED[case]
        M = ej.CSR(args, shape=(2, 3), validate=False)
        np.testing.assert_array_equal(M @ jnp.eye(3), expected)
        np.testing.assert_array_equal(M.todense(), expected)
        np.testing.assert_array_equal(jax.jit(lambda M: M.todense())(M), expected)
        np.testing.assert_array_equal(M.T.todense(), np.transpose(expected))

    @pytest.mark.parametrize('case', list(UNCHECKED))
    def test_tocoo_lists_only_the_entries_the_products_keep(self, case):
        args, expected = UNCHECKED[case]
        M = ej.CSR(args, shape=(2, 3), validate=False)
        coo = M.tocoo()
        np.testing.assert_array_equal(coo_dense(coo), expected)
        assert coo.data.shape[0] == np.count_nonzero(expected)
        np.testing.assert_array_equal(coo_dense(M.T.tocoo()), np.transpose(expected))

    @pytest.mark.parametrize('case', list(UNCHECKED))
    def test_traced_tocoo_keeps_the_count_with_dropped_entries_weighing_nothing(self, case):
        args, expected = UNCHECKED[case]
        coo = jax.jit(lambda M: M.tocoo())(ej.CSR(args, shape=(2, 3), validate=False))
        assert coo.data.shape[0] == 3
        np.testing.assert_array_equal(coo_dense(coo), expected)

    def test_a_vector_product_of_todense_is_the_product(self):
        args, _ = UNCHECKED['column -1']
        M = ej.CSR(args, shape=(2, 3), validate=False)
        v = jnp.array([1.0, 10.0, 100.0])
        np.testing.assert_array_equal(M.todense() @ v, M @ v)

    @pytest.mark.parametrize(('row', 'col', 'expected'), [
        ([0, 1, 1], [0, -1, 2], [[1, 0, 0], [0, 0, 5]]),  # a negative column would wrap to the last one
        ([0, 1, 1], [0, 3, 2], [[1, 0, 0], [0, 0, 5]]),
        ([0, -1, 1], [0, 1, 2], [[1, 0, 0], [0, 0, 5]]),
        ([0, 1, 2], [0, 1, 2], [[1, 0, 0], [0, 2, 0]]),
    ])
    def test_a_user_built_coo_drops_coordinates_outside_the_shape_like_its_products(self, row, col, expected):
        C = ej.COO((jnp.array([1.0, 2.0, 5.0]), jnp.array(row), jnp.array(col)), shape=(2, 3), validate=False)
        # Eagerly the product checks the coordinates and raises; traced, it drops the entry.
        np.testing.assert_array_equal(jax.jit(lambda C: C @ jnp.eye(3))(C), expected)
        np.testing.assert_array_equal(C.todense(), expected)
        np.testing.assert_array_equal(jax.jit(lambda C: C.todense())(C), expected)
        np.testing.assert_array_equal(C.T.todense(), np.transpose(expected))

    def test_fixed_num_conn_tocoo_drops_bad_columns_like_its_todense(self):
        F = ej.FixedNumConn((jnp.array([[1.0, 2.0], [3.0, 4.0]]), jnp.array([[0, -1], [3, 1]])), shape=(2, 3),
                            validate=False)
        np.testing.assert_array_equal(coo_dense(F.tocoo()), F.todense())
        np.testing.assert_array_equal(F.todense(), [[1, 0, 0], [0, 4, 0]])
