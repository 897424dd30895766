"""Containers learn: update_on_pre / update_on_post return the updated container, on every layout and view."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej

DENSE = np.array([[0.5, 0.0, 0.2], [0.0, 0.3, 0.0], [0.1, 0.0, 0.4], [0.0, 0.6, 0.7]], np.float32)
PRE = np.array([True, False, True, False])
POST = np.array([False, True, True])
PRE_TRACE = np.array([0.1, 0.2, 0.3, 0.4], np.float32)
POST_TRACE = np.array([0.01, 0.02, 0.03], np.float32)


@pytest.fixture(autouse=True)
def _jax_kernels():
    # The kernels are tested in tests/kernels/plasticity; here the routing is (the jax kernels compile fastest).
    with ej.config.override(cpu='jax'):
        yield


def _on_pre(dense, pre, post_trace):
    out = dense.copy()
    for i in np.flatnonzero(pre):
        out[i] += np.where(dense[i] != 0, post_trace, 0)
    return out


def _on_post(dense, pre_trace, post):
    out = dense.copy()
    for j in np.flatnonzero(post):
        out[:, j] += np.where(dense[:, j] != 0, pre_trace, 0)
    return out


class TestCsr:
    def test_update_on_pre_adds_the_trace_to_stored_entries_of_firing_rows(self):
        A = ej.CSR.fromdense(DENSE).update_on_pre(PRE, POST_TRACE)
        np.testing.assert_allclose(A.todense(), _on_pre(DENSE, PRE, POST_TRACE), rtol=1e-6)

    def test_update_on_post_goes_through_the_cached_column_view(self):
        A = ej.CSR.fromdense(DENSE)
        B = A.update_on_post(PRE_TRACE, POST)
        np.testing.assert_allclose(B.todense(), _on_post(DENSE, PRE_TRACE, POST), rtol=1e-6)
        assert A._column_view is not None
        assert all(b is a for a, b in zip(A._column_view, B._column_view))

    def test_transposed_view_swaps_pre_and_post(self):
        At = ej.CSR.fromdense(DENSE).T  # presynaptic = columns of DENSE
        B = At.update_on_pre(POST, PRE_TRACE)
        np.testing.assert_allclose(B.todense().T, _on_post(DENSE, PRE_TRACE, POST), rtol=1e-6)
        C = At.update_on_post(POST_TRACE, PRE)
        np.testing.assert_allclose(C.todense().T, _on_pre(DENSE, PRE, POST_TRACE), rtol=1e-6)

    def test_csc_updates_the_matrix_it_shows(self):
        A = ej.CSC.fromdense(DENSE)
        np.testing.assert_allclose(A.update_on_pre(PRE, POST_TRACE).todense(), _on_pre(DENSE, PRE, POST_TRACE),
                                   rtol=1e-6)
        np.testing.assert_allclose(A.update_on_post(PRE_TRACE, POST).todense(), _on_post(DENSE, PRE_TRACE, POST),
                                   rtol=1e-6)

    def test_a_built_view_travels_through_jit_so_no_sort_is_traced(self):
        A = ej.CSR.fromdense(DENSE).with_column_view()
        jaxpr = str(jax.make_jaxpr(lambda A: A.update_on_post(PRE_TRACE, POST).data)(A))
        assert 'sort' not in jaxpr
        out = jax.jit(lambda A: A.update_on_post(PRE_TRACE, POST))(A)
        np.testing.assert_allclose(out.todense(), _on_post(DENSE, PRE_TRACE, POST), rtol=1e-6)

    def test_scan_carry_of_a_csr_learns_every_step(self):
        A = ej.CSR.fromdense(DENSE).with_column_view()

        def step(A, _):
            return A.update_on_pre(PRE, POST_TRACE).update_on_post(PRE_TRACE, POST), None

        out, _ = jax.jit(lambda A: jax.lax.scan(step, A, None, length=3), donate_argnums=0)(A)
        want = DENSE
        for _ in range(3):
            want = _on_post(_on_pre(want, PRE, POST_TRACE), PRE_TRACE, POST)
        np.testing.assert_allclose(out.todense(), want, rtol=1e-5)

    def test_homogeneous_weight_cannot_learn(self):
        A = ej.CSR((0.5, jnp.array([0, 1]), jnp.array([0, 1, 2])), shape=(2, 2))
        with pytest.raises(ValueError, match='homogeneous'):
            A.update_on_pre(jnp.array([True, True]), jnp.ones(2))


class TestFixedNumConn:
    W = np.array([[0.5, 0.2], [0.3, 0.1], [0.4, 0.7]], np.float32)
    IDX = np.array([[0, 2], [1, 0], [2, 1]], np.int32)

    def dense(self):
        out = np.zeros((3, 3), np.float32)
        for i in range(3):
            out[i, self.IDX[i]] = self.W[i]
        return out

    def test_update_on_pre_and_on_post_match_the_dense_rule(self):
        A = ej.FixedNumConn((jnp.asarray(self.W), jnp.asarray(self.IDX)), shape=(3, 3))
        pre, post = np.array([True, False, True]), np.array([False, True, True])
        np.testing.assert_allclose(A.update_on_pre(pre, POST_TRACE).todense(),
                                   _on_pre(self.dense(), pre, POST_TRACE), rtol=1e-6)
        np.testing.assert_allclose(A.update_on_post(PRE_TRACE[:3], post).todense(),
                                   _on_post(self.dense(), PRE_TRACE[:3], post), rtol=1e-6)

    def test_fixed_num_per_post_updates_on_post_row_by_row(self):
        # Stored per postsynaptic neuron: update_on_post is its favourable direction.
        W = ej.FixedNumPerPost(jnp.asarray(self.W), jnp.asarray(self.IDX), shape=(3, 3))
        dense = np.asarray(W.todense())
        post = np.array([True, False, True])
        np.testing.assert_allclose(W.update_on_post(PRE_TRACE[:3], post).todense(),
                                   _on_post(dense, PRE_TRACE[:3], post), rtol=1e-6)
        pre = np.array([False, True, True])
        np.testing.assert_allclose(W.update_on_pre(pre, POST_TRACE).todense(), _on_pre(dense, pre, POST_TRACE),
                                   rtol=1e-6)
