"""FixedNumConn: a pytree whose `@` routes to the FCN operators, and its conversions to and from CSR."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej


@pytest.fixture(scope='module')
def fcn():
    return ej.random_fixed_num_conn(jax.random.key(1), 7, 5, 3, weight=lambda k, s: jax.random.normal(k, s))


def dense_of(A):
    return np.asarray(A.todense(), np.float64)


class TestFixedNumConnMatmul:
    def test_event_vector_times_the_matrix_is_the_event_driven_scatter(self, fcn):
        s = jnp.array([True, False, True, True, False, False, True])
        jaxpr = str(jax.make_jaxpr(lambda s: ej.EventArray(s) @ fcn)(s))
        assert 'binary_fcnmv[' in jaxpr and 'transpose=True' in jaxpr
        np.testing.assert_allclose(ej.EventArray(s) @ fcn, np.asarray(s) @ dense_of(fcn), rtol=1e-5, atol=1e-6)

    def test_every_combination_matches_the_dense_product(self, fcn):
        rng = np.random.default_rng(0)
        D = dense_of(fcn)
        v5, v7 = rng.normal(size=5).astype(np.float32), rng.normal(size=7).astype(np.float32)
        M5, M7 = rng.normal(size=(5, 2)).astype(np.float32), rng.normal(size=(2, 7)).astype(np.float32)
        e5, e7 = np.array([1.0, -1, 0.5, 0, 2], np.float32), rng.random((3, 7)) < 0.5
        cases = [
            (fcn @ v5, D @ v5), (v7 @ fcn, v7 @ D), (fcn @ M5, D @ M5), (M7 @ fcn, M7 @ D),
            (fcn @ ej.EventArray(e5), D @ (e5 > 0)), (ej.EventArray(e7) @ fcn, e7 @ D),
            (fcn.T @ v7, D.T @ v7), (v5 @ fcn.T, v5 @ D.T), (fcn.T @ ej.EventArray(e7.T), D.T @ e7.T),
        ]
        for got, want in cases:
            np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)

    def test_the_matrix_is_a_pytree_that_jit_and_vmap_accept(self, fcn):
        v = jnp.ones(5)
        np.testing.assert_allclose(jax.jit(lambda A, v: A @ v)(fcn, v), fcn @ v, rtol=1e-6)
        grads = jax.grad(lambda A: (A @ v).sum(), allow_int=True)(fcn)
        assert isinstance(grads, ej.FixedNumConn) and grads.weights.shape == (7, 3)
        assert jax.tree_util.tree_structure(fcn.T) != jax.tree_util.tree_structure(fcn)

    def test_transpose_is_a_lazy_view(self, fcn):
        assert fcn.T.shape == (5, 7) and fcn.T.T.shape == (7, 5)
        assert fcn.T.indices is fcn.indices
        np.testing.assert_allclose(dense_of(fcn.T), dense_of(fcn).T)

    def test_backend_choice_applies_to_matmul(self, fcn):
        with ej.config.override(cpu='warp'):
            np.testing.assert_allclose(fcn @ jnp.ones(5), dense_of(fcn).sum(1), rtol=1e-5, atol=1e-5)


class TestFixedNumConnConversion:
    def test_tocsr_and_back_keep_the_matrix(self, fcn):
        csr = fcn.tocsr()
        np.testing.assert_allclose(dense_of(csr), dense_of(fcn), rtol=1e-6)
        np.testing.assert_allclose(dense_of(ej.CSR.from_fixed_num_conn(fcn)), dense_of(fcn), rtol=1e-6)
        back = ej.FixedNumConn.from_csr(csr)
        assert back.indices.shape == (7, 3)
        np.testing.assert_allclose(dense_of(back), dense_of(fcn), rtol=1e-6)

    def test_a_shared_weight_stays_shared_in_csr(self):
        A = ej.random_fixed_num_conn(jax.random.key(2), 4, 4, 2, weight=0.25)
        assert A.tocsr().data.shape == (1,)
        assert ej.FixedNumConn.from_csr(A.tocsr()).weights.shape == (1,)

    def test_tocsr_is_traceable(self, fcn):
        f = jax.jit(lambda A, v: A.tocsr() @ v)
        np.testing.assert_allclose(f(fcn, jnp.ones(5)), fcn @ jnp.ones(5), rtol=1e-6)

    def test_transposed_views_convert_to_transposed_views(self, fcn):
        np.testing.assert_allclose(dense_of(fcn.T.tocsr()), dense_of(fcn).T, rtol=1e-6)
        np.testing.assert_allclose(dense_of(ej.FixedNumConn.from_csr(fcn.tocsr().T)), dense_of(fcn).T, rtol=1e-6)

    def test_a_csr_with_uneven_rows_is_refused(self):
        csr = ej.CSR.fromdense(np.array([[1.0, 0.0], [1.0, 1.0]], np.float32))
        with pytest.raises(ValueError, match='same number of entries'):
            ej.FixedNumConn.from_csr(csr)


class TestFixedNumConnValidate:
    def test_valid_structure_passes(self, fcn):
        assert fcn.validate() is fcn

    def test_an_index_out_of_range_is_named_at_construction_and_by_validate(self):
        args = (1.0, jnp.array([[0, 5], [1, 2]]))
        with pytest.raises(ValueError, match=r'FixedNumConn\(\): indices\[0, 1\] = 5 is outside \[0, 5\)'):
            ej.FixedNumConn(args, shape=(2, 5))
        A = ej.FixedNumConn(args, shape=(2, 5), validate=False)
        with pytest.raises(ValueError, match=r'FixedNumConn\.validate\(\): indices\[0, 1\] = 5'):
            A.validate()
        # Unchecked, the connection that points nowhere is dropped.
        np.testing.assert_array_equal(A @ jnp.ones(5), [1.0, 2.0])

    def test_weights_of_the_wrong_shape_are_named(self):
        args = (jnp.ones((2, 3)), jnp.zeros((2, 2), jnp.int32))
        with pytest.raises(ValueError, match='weights must have shape'):
            ej.FixedNumConn(args, shape=(2, 5))
        with pytest.raises(ValueError, match='weights must have shape'):
            ej.FixedNumConn(args, shape=(2, 5), validate=False).validate()


class TestWithDelays:
    def test_delays_of_the_transposed_shape_are_refused(self):
        F = ej.FixedNumConn((np.ones((3, 2), np.float32), np.array([[0, 1], [1, 2], [2, 0]])), shape=(3, 3))
        with pytest.raises(ValueError, match=r'delays must have the shape of indices, \(3, 2\)'):
            F.with_delays(np.ones((2, 3), int))
        assert F.with_delays(np.full((3, 2), 2)).ring_length == 3
        assert F.with_delays(2).ring_length == 3
