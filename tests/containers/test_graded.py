"""GradedEvents: products over the non-zero entries only, on every container and backend, with exact derivatives."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej

DENSE = np.array([[0., 2., 0., 1.], [3., 0., 4., 0.], [0., 5., 0., 6.]], np.float32)
X_ROWS = np.array([0., 2., -1.5], np.float32)      # one entry per row of DENSE
X_COLS = np.array([1., 0., 0., 2.], np.float32)    # one entry per column


def _containers():
    csr = ej.CSR.fromdense(DENSE)
    return {'csr': csr, 'csc': ej.CSC.fromdense(DENSE), 'coo': csr.tocoo(),
            'fcn': ej.FixedNumConn.from_edges(*np.nonzero(DENSE != 0), DENSE[DENSE != 0], shape=(3, 4)),
            'dense': jnp.asarray(DENSE)}


@pytest.mark.parametrize('backend', ['jax', 'numba', 'warp'])
def test_both_directions_match_the_float_product_on_every_backend(backend):
    with ej.config.override(cpu=backend):
        for name, A in _containers().items():
            got_t = ej.GradedEvents(X_ROWS) @ A
            got = A @ ej.GradedEvents(X_COLS)
            np.testing.assert_allclose(got_t, X_ROWS @ DENSE, rtol=1e-6, err_msg=name)
            np.testing.assert_allclose(got, DENSE @ X_COLS, rtol=1e-6, err_msg=name)


@pytest.mark.parametrize('backend', ['jax', 'numba'])
def test_a_nan_weight_meets_no_zero(backend):
    poisoned = DENSE.copy()
    poisoned[1, 0] = np.nan                  # row 1 of x is 2.0: reached; column 0 of x is 1.0: reached
    poisoned[0, 3] = np.inf                  # row 0 of x is 0: never reached in x @ A
    A = ej.CSR.fromdense(poisoned)
    with ej.config.override(cpu=backend):
        out = ej.GradedEvents(X_ROWS) @ A
        assert np.isnan(out[0]) and np.isfinite(out[1:]).all()
        col = np.array([0., 1., 0., 0.], np.float32)   # skips column 0 (NaN) and 3 (inf)
        np.testing.assert_allclose(A @ ej.GradedEvents(col), poisoned[:, 1], rtol=1e-6)
        # A float vector multiplies every stored entry: NaN * 0 = NaN.
        assert np.isnan(A @ jnp.asarray(col)).any()
    assert np.isfinite(ej.GradedEvents(col) @ jnp.asarray(poisoned.T)).all()


def test_matrices_of_graded_events_multiply_column_by_column():
    A = ej.CSR.fromdense(DENSE)
    X = np.stack([X_ROWS, 2 * X_ROWS], 1)
    np.testing.assert_allclose(A.T @ ej.GradedEvents(X), DENSE.T @ X, rtol=1e-6)
    np.testing.assert_allclose(ej.GradedEvents(X.T) @ A, X.T @ DENSE, rtol=1e-6)


@pytest.mark.parametrize('backend', ['jax', 'numba'])
def test_derivatives_are_the_linear_maps_zero_entries_included(backend):
    csr = ej.CSR.fromdense(DENSE)
    cot = np.array([1., -1., 2., 0.5], np.float32)
    with ej.config.override(cpu=backend):
        g_x = jax.grad(lambda x: jnp.sum((ej.GradedEvents(x) @ csr) * cot))(jnp.asarray(X_ROWS))
        np.testing.assert_allclose(g_x, DENSE @ cot, rtol=1e-6)   # X_ROWS[0] == 0 still gets its derivative
        g_w = jax.grad(lambda w: jnp.sum((ej.GradedEvents(X_ROWS) @ csr.with_data(w)) * cot))(csr.data)
        rows, cols = np.nonzero(DENSE)
        np.testing.assert_allclose(g_w, X_ROWS[rows] * cot[cols], rtol=1e-6)
        cot_m = np.array([1., 2., -1.], np.float32)
        g_xc = jax.grad(lambda x: jnp.sum((csr @ ej.GradedEvents(x)) * cot_m))(jnp.asarray(X_COLS))
        np.testing.assert_allclose(g_xc, cot_m @ DENSE, rtol=1e-6)
        g_wc = jax.grad(lambda w: jnp.sum((csr.with_data(w) @ ej.GradedEvents(X_COLS)) * cot_m))(csr.data)
        np.testing.assert_allclose(g_wc, X_COLS[cols] * cot_m[rows], rtol=1e-6)
    _, tangent = jax.jvp(lambda x: ej.GradedEvents(x) @ jnp.asarray(DENSE), (jnp.asarray(X_ROWS),),
                         (jnp.ones(3, jnp.float32),))
    np.testing.assert_allclose(tangent, DENSE.sum(0), rtol=1e-6)


def test_weight_gradient_stays_finite_when_only_the_weights_are_differentiated():
    csr = ej.CSR.fromdense(DENSE)
    col = jnp.asarray(X_COLS)
    g = jax.grad(lambda w: jnp.sum(csr.with_data(w) @ ej.GradedEvents(col)))(csr.data.at[0].set(jnp.nan))
    assert np.isfinite(np.asarray(g)).all()


def test_jit_and_vmap_over_graded_events():
    A = ej.CSR.fromdense(DENSE)
    xs = np.stack([X_ROWS, -X_ROWS, np.zeros(3, np.float32)])
    got = jax.jit(jax.vmap(lambda x: ej.GradedEvents(x) @ A))(xs)
    np.testing.assert_allclose(got, xs @ DENSE, rtol=1e-6)


def test_jitc_takes_graded_events_as_the_float_product():
    J = ej.JITCMatrix(0.5, seed=3, prob=0.5, shape=(3, 4))
    np.testing.assert_allclose(ej.GradedEvents(X_ROWS) @ J, X_ROWS @ J.todense(), rtol=1e-5, atol=1e-6)


def test_weighted_array_is_brainevents_name():
    with pytest.warns(DeprecationWarning, match='use eventjax.GradedEvents'):
        assert ej.WeightedArray is ej.GradedEvents
    assert isinstance(ej.GradedEvents(X_ROWS), ej.EventArray)
    leaves, tree = jax.tree_util.tree_flatten(ej.GradedEvents(X_ROWS))
    assert type(jax.tree_util.tree_unflatten(tree, leaves)) is ej.GradedEvents


@pytest.mark.parametrize('kind', ['csr', 'fcn', 'dense'])
def test_events_of_the_wrong_length_are_named_by_the_product(kind):
    A = _containers()[kind]
    with pytest.raises(ValueError, match=r'GradedEvents product: each event vector must have 3 entries .*got 4'):
        ej.GradedEvents(X_COLS) @ A
    with pytest.raises(ValueError, match=r'GradedEvents product: each event vector must have 4 entries .*got 3'):
        A @ ej.GradedEvents(X_ROWS)

