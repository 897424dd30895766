"""JITCMatrix: @ routing, .T, todense/tocsr, a traced seed, pytree and backend=."""

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej


def matrix(**kwargs):
    args = dict(prob=0.2, seed=4, shape=(12, 9), law='uniform')
    args.update(kwargs)
    return ej.JITCMatrix(args.pop('weights', (0.5, 1.5)), **args)


class TestJITCMatrix:
    def test_matmul_routes_to_the_four_operators(self):
        A = matrix()
        D = np.asarray(A.todense())
        v, u = jnp.arange(9.0), jnp.arange(12.0)
        np.testing.assert_allclose(A @ v, D @ np.asarray(v), rtol=1e-5)
        np.testing.assert_allclose(u @ A, np.asarray(u) @ D, rtol=1e-5)
        np.testing.assert_allclose(ej.EventArray(u > 5) @ A, (np.asarray(u) > 5) @ D, rtol=1e-5)
        np.testing.assert_allclose(A @ ej.EventArray(v > 3), D @ (np.asarray(v) > 3), rtol=1e-5)
        B = jnp.ones((9, 2))
        np.testing.assert_allclose(A @ B, D @ np.ones((9, 2)), rtol=1e-5)
        np.testing.assert_allclose(jnp.ones((2, 12)) @ A, np.ones((2, 12)) @ D, rtol=1e-5)

    def test_transpose_is_a_view_of_the_same_matrix(self):
        A = matrix()
        assert A.T.shape == (9, 12) and A.T.T.shape == (12, 9)
        np.testing.assert_array_equal(np.asarray(A.T.todense()), np.asarray(A.todense()).T)

    def test_nnz_is_the_expected_count(self):
        assert matrix(prob=0.001, shape=(1000, 2000)).nnz == 1000 * 2000 * 0.001

    def test_a_traced_seed_vmaps_over_networks(self):
        f = jax.jit(jax.vmap(lambda s: matrix(seed=s) @ jnp.ones(9)))
        got = f(jnp.arange(3))
        want = np.stack([np.asarray(matrix(seed=s).todense()).sum(1) for s in range(3)])
        np.testing.assert_allclose(got, want, rtol=1e-5)

    def test_it_is_a_pytree_with_weights_and_seed_as_leaves(self):
        A = matrix()
        leaves, tree = jax.tree_util.tree_flatten(A)
        assert len(leaves) == 2
        B = jax.tree_util.tree_unflatten(tree, leaves)
        np.testing.assert_array_equal(np.asarray(B.todense()), np.asarray(A.todense()))

    def test_gradients_flow_to_the_weights(self):
        g = jax.grad(lambda w: (ej.JITCMatrix(w, prob=0.2, seed=4, shape=(12, 9)) @ jnp.ones(9)).sum())(2.0)
        assert float(g) == float((np.asarray(matrix(weights=1.0, law='homo').todense()) != 0).sum())

    def test_backend_is_used_for_every_product(self):
        for backend in ('jax', 'numba'):
            jaxpr = str(jax.make_jaxpr(lambda v, b=backend: matrix(backend=b) @ v)(jnp.ones(9)))
            assert f"backend='{backend}'" in jaxpr or f'backend={backend}' in jaxpr


class TestNegation:
    """-A and A * s (s < 0) on uniform and normal laws: the product is exactly minus A's, eager and jit alike."""

    @staticmethod
    def laws():
        return [matrix(), matrix(law='normal', weights=(0.5, 0.25))]

    def test_minus_a_times_a_vector_is_minus_the_product(self):
        v = jnp.linspace(-1.0, 1.0, 9)
        for A in self.laws():
            for negated in (-A, A * -1.0, -1.0 * A):
                eager = negated @ v
                np.testing.assert_array_equal(eager, -(A @ v))
                np.testing.assert_array_equal(eager, jax.jit(lambda M: M @ v)(negated))

    def test_events_matrices_and_transposes_of_minus_a(self):
        spikes = ej.EventArray(jnp.arange(12) % 3 == 0)
        X = jnp.ones((9, 2))
        for A in self.laws():
            np.testing.assert_array_equal(spikes @ -A, -(spikes @ A))
            np.testing.assert_array_equal((-A) @ X, -(A @ X))
            np.testing.assert_array_equal((-A).T.todense(), -A.T.todense())

    def test_a_gradient_through_minus_a_is_minus_the_gradient(self):
        v = jnp.ones(9)
        for A in self.laws():
            g = jax.grad(lambda w, A=A: jnp.sum(-(A.with_data(w)) @ v))(A.weights)
            np.testing.assert_allclose(g, -jax.grad(lambda w, A=A: jnp.sum(A.with_data(w) @ v))(A.weights), rtol=1e-6)
