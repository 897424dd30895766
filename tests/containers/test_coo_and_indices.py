"""COO, the index conversions, and scipy / edge-list input: each agrees with a dense NumPy matrix."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.sparse as sp

import eventjax as ej

RNG = np.random.default_rng(0)
ROWS = RNG.integers(0, 5, 30)
COLS = RNG.integers(0, 7, 30)
DATA = RNG.standard_normal(30).astype(np.float32)


def _dense(rows=ROWS, cols=COLS, data=DATA, shape=(5, 7)):
    out = np.zeros(shape, np.float32)
    np.add.at(out, (rows, cols), data)
    return out


@pytest.fixture(autouse=True)
def _jax_kernels():
    with ej.config.override(cpu='jax'):
        yield


class TestIndexConversions:
    def test_coo2csr_groups_rows_stably(self):
        indptr, indices, order = ej.coo2csr(ROWS, COLS, shape=(5, 7))
        assert isinstance(indptr, np.ndarray) and indptr.dtype == np.int32
        np.testing.assert_array_equal(indptr, np.concatenate([[0], np.cumsum(np.bincount(ROWS, minlength=5))]))
        np.testing.assert_array_equal(order, np.argsort(ROWS, kind='stable'))
        np.testing.assert_array_equal(indices, COLS[order])

    def test_jax_input_traces_under_jit_and_matches_numpy(self):
        got = jax.jit(lambda r, c: ej.coo2csr(r, c, shape=(5, 7)))(jnp.asarray(ROWS), jnp.asarray(COLS))
        for a, b in zip(got, ej.coo2csr(ROWS, COLS, shape=(5, 7))):
            np.testing.assert_array_equal(np.asarray(a), b)

    def test_csr_csc_round_trip_reorders_the_weights(self):
        A = ej.CSR.fromcoo(DATA, ROWS, COLS, shape=(5, 7))
        indptr, rows, order = ej.csr_to_csc_index(np.asarray(A.indptr), np.asarray(A.indices), shape=(5, 7))
        C = ej.CSC((np.asarray(A.data)[order], rows, indptr), shape=(5, 7))
        np.testing.assert_allclose(C.todense(), _dense(), rtol=1e-6)
        back_ptr, back_cols, back = ej.csc_to_csr_index(indptr, rows, shape=(5, 7))
        B = ej.CSR((np.asarray(A.data)[order][back], back_cols, back_ptr), shape=(5, 7))
        np.testing.assert_allclose(B.todense(), _dense(), rtol=1e-6)

    def test_a_coordinate_outside_the_shape_names_the_entry(self):
        with pytest.raises(ValueError, match=r'row_ids\[1\] = 9 is outside \[0, 3\)'):
            ej.coo2csr(np.array([0, 9]), np.array([0, 0]), shape=(3, 3))
        with pytest.raises(ValueError, match=r'col_ids\[0\] = -1'):
            ej.coo2csr(np.array([0, 1]), np.array([-1, 0]), shape=(3, 3))

    def test_bad_concrete_row_pointers_are_named_not_converted(self):
        indices = np.array([0, 2, 1])
        for bad, match in (([0, 3, 2], r'indptr must never decrease'), ([1, 2, 3], r'indptr\[0\] must be 0'),
                           ([0, 2, 5], r'indptr\[-1\] = 5 is past the end')):
            with pytest.raises(ValueError, match=r'csr_to_coo_index\(\): ' + match):
                ej.csr_to_coo_index(np.array(bad), indices)
            with pytest.raises(ValueError, match=r'csr_to_csc_index\(\): ' + match):
                ej.csr_to_csc_index(np.array(bad), indices, shape=(2, 3))
        with pytest.raises(TypeError, match='indptr must be a 1-D integer array'):
            ej.csr_to_coo_index(np.array([0., 2., 3.]), indices)

    def test_a_pointer_array_of_the_wrong_length_for_shape_is_refused(self):
        with pytest.raises(ValueError, match=r'csr_to_csc_index\(\): indptr must have length 3 \(rows'):
            ej.csr_to_csc_index(np.array([0, 2, 3, 3]), np.array([0, 2, 1]), shape=(2, 3))
        with pytest.raises(ValueError, match=r'csc_to_csr_index\(\): indptr must have length 4 \(columns'):
            ej.csc_to_csr_index(np.array([0, 1, 3]), np.array([1, 1, 0]), shape=(2, 3))

    def test_conversion_errors_name_the_function_called_and_the_axis(self):
        with pytest.raises(ValueError, match=r'csc_to_csr_index\(\): indices\[1\] = 5 is outside \[0, 2\) \(the rows'):
            ej.csc_to_csr_index(np.array([0, 1, 2, 3]), np.array([1, 5, 0]), shape=(2, 3))
        with pytest.raises(TypeError, match=r'coo2csr\(\): col_ids must hold integers'):
            ej.coo2csr(np.array([0, 1]), np.array([0., 3.]), shape=(2, 3))
        with pytest.raises(ValueError, match=r'coo2csr\(\): row_ids must be a 1-D array'):
            ej.coo2csr(np.zeros((2, 2), int), np.array([0, 1, 0, 1]), shape=(2, 3))

    def test_entries_past_the_last_row_pointer_belong_to_no_column(self):
        indptr, rows, order = ej.csr_to_csc_index(np.array([0, 1, 2]), np.array([0, 1, 1]), shape=(2, 2))
        np.testing.assert_array_equal(indptr, [0, 1, 2])
        np.testing.assert_array_equal(rows[:2], [0, 1])
        np.testing.assert_array_equal(order[:2], [0, 1])

    def test_traced_out_of_range_rows_belong_to_no_row(self):
        indptr, indices, _ = jax.jit(lambda r, c: ej.coo2csr(r, c, shape=(2, 2)))(
            jnp.array([5, 0, -1, 1]), jnp.array([0, 1, 1, 0]))
        np.testing.assert_array_equal(indptr, [0, 1, 2])
        np.testing.assert_array_equal(indices[:2], [1, 0])


class TestCOO:
    def test_todense_transpose_and_tocsr_agree_with_numpy(self):
        A = ej.COO((DATA, ROWS, COLS), shape=(5, 7))
        np.testing.assert_allclose(A.todense(), _dense(), rtol=1e-6)
        np.testing.assert_allclose(A.T.todense(), _dense().T, rtol=1e-6)
        np.testing.assert_allclose(A.tocsr().todense(), _dense(), rtol=1e-6)
        assert A.T.shape == (7, 5)

    def test_products_go_through_csr(self):
        A = ej.COO((DATA, ROWS, COLS), shape=(5, 7))
        s = np.arange(5) % 2 == 0
        np.testing.assert_allclose(ej.EventArray(s) @ A, s @ _dense(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(A.T @ jnp.ones(5), _dense().T @ np.ones(5), rtol=1e-5, atol=1e-6)

    def test_tocoo_returns_a_coo_of_the_view(self):
        A = ej.CSR.fromcoo(DATA, ROWS, COLS, shape=(5, 7))
        assert type(A.tocoo()) is ej.COO
        np.testing.assert_allclose(A.T.tocoo().todense(), _dense().T, rtol=1e-6)
        fcn = ej.FixedNumConn((1.0, np.array([[0, 1], [2, 2]])), shape=(2, 3))
        np.testing.assert_allclose(fcn.tocoo().todense(), fcn.todense())

    def test_coo_is_a_pytree_and_differentiable_in_data(self):
        A = ej.COO((jnp.asarray(DATA), ROWS, COLS), shape=(5, 7))
        g = jax.grad(lambda d: A.with_data(d).todense().sum())(A.data)
        np.testing.assert_allclose(g, np.ones(30))
        leaves, tree = jax.tree_util.tree_flatten(A)
        np.testing.assert_allclose(jax.tree_util.tree_unflatten(tree, leaves).todense(), _dense(), rtol=1e-6)

    def test_a_coordinate_outside_the_shape_is_an_error(self):
        with pytest.raises(ValueError, match=r'col\[0\] = 3 is outside \[0, 3\)'):
            ej.COO((np.ones(1), np.array([0]), np.array([3])), shape=(2, 3))


class TestScipyAndEdgeLists:
    def test_from_scipy_and_to_scipy_round_trip(self):
        M = sp.coo_array((DATA, (ROWS, COLS)), shape=(5, 7))
        A = ej.CSR.from_scipy(M)
        np.testing.assert_allclose(A.todense(), M.toarray(), rtol=1e-6)
        np.testing.assert_allclose(A.T.to_scipy().toarray(), M.toarray().T, rtol=1e-6)
        with pytest.raises(TypeError, match='scipy.sparse'):
            ej.CSR.from_scipy(np.eye(2))

    def test_fromcoo_and_from_edges_refuse_data_of_another_length(self):
        rows, cols = np.array([1, 0, 1]), np.array([0, 2, 1])
        for data in (np.ones(2, np.float32), np.ones(4, np.float32), np.ones((1, 3), np.float32)):
            with pytest.raises(ValueError, match=r'CSR.fromcoo\(\): data must have length 3'):
                ej.CSR.fromcoo(data, rows, cols, shape=(2, 3))
        with pytest.raises(ValueError, match='data must have length 4'):
            ej.FixedNumConn.from_edges(np.array([1, 0, 1, 0]), np.array([0, 2, 1, 1]), np.ones(3, np.float32),
                                       shape=(2, 3))
        np.testing.assert_allclose(ej.CSR.fromcoo(2.0, rows, cols, shape=(2, 3)).todense(),
                                   _dense(rows, cols, np.full(3, 2.0), (2, 3)))

    def test_fixed_num_conn_from_an_edge_list(self):
        pre, post = np.array([1, 0, 1, 0]), np.array([0, 2, 1, 1])
        A = ej.FixedNumConn.from_edges(pre, post, np.array([1., 2., 3., 4.], np.float32), shape=(2, 3))
        np.testing.assert_allclose(A.todense(), _dense(pre, post, np.array([1., 2., 3., 4.]), (2, 3)))
        with pytest.raises(ValueError, match='same number of entries'):
            ej.FixedNumConn.from_edges(np.array([0, 0, 1]), np.array([0, 1, 0]), shape=(2, 2))
