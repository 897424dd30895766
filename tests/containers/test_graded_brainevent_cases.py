"""What brainevent 0.3.0's ``WeightedArray`` tests check, held by :class:`eventjax.GradedEvents`.

Where the Semantics page rules otherwise (``GradedEvents`` is an
``EventArray``, so it is accepted wherever events are; binary events are
``> 0``), the eventjax rule is what is checked.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej

W = jnp.asarray([[1., 10., -2.], [100., 0., 3.], [0., 1000., 4.], [5., 6., 7.]], jnp.float32)
DTYPES = [jnp.int8, jnp.uint8, jnp.int16, jnp.int32, jnp.float16, jnp.bfloat16, jnp.float32]


class TestGradedEvents:
    @pytest.mark.parametrize('dtype', [*DTYPES, jnp.bool_])
    def test_numeric_and_bool_values_keep_their_dtype(self, dtype):
        assert ej.GradedEvents(jnp.zeros(3, dtype)).dtype == dtype

    def test_complex_values_are_refused(self):
        with pytest.raises(TypeError, match='boolean, integer or floating-point'):
            ej.GradedEvents(jnp.zeros(3, jnp.complex64))

    def test_a_pytree_that_survives_jit(self):
        x = ej.GradedEvents(jnp.array([0, 3, 1], jnp.int8))
        leaves, tree = jax.tree_util.tree_flatten(x)
        assert isinstance(jax.tree_util.tree_unflatten(tree, leaves), ej.GradedEvents)
        out = jax.jit(lambda e: e)(x)
        assert isinstance(out, ej.GradedEvents)
        np.testing.assert_array_equal(out.value, x.value)

    def test_transposes(self):
        v = jnp.arange(6.).reshape(2, 3)
        assert isinstance(ej.GradedEvents(v).T, ej.GradedEvents)
        np.testing.assert_array_equal(ej.GradedEvents(v).T.value, v.T)
        np.testing.assert_array_equal(ej.GradedEvents(v).transpose(1, 0).value, v.T)

    def test_mismatched_shapes_raise(self):
        w = jnp.ones((3, 2))
        with pytest.raises((ValueError, TypeError)):
            ej.GradedEvents(jnp.ones(4)) @ w
        with pytest.raises((ValueError, TypeError)):
            w @ ej.GradedEvents(jnp.ones(3))
        with pytest.raises((ValueError, TypeError)):
            ej.GradedEvents(jnp.ones((2, 2, 3))) @ w

    @pytest.mark.parametrize('dtype', DTYPES)
    def test_products_with_dense_weights_in_both_directions_and_batches(self, dtype):
        raw = np.array([2., -1., 0., 0.5])
        v = jnp.asarray(np.trunc(raw) if jnp.issubdtype(dtype, jnp.integer) else raw).astype(dtype)
        vf, w = np.asarray(v.astype(jnp.float32), np.float64), np.asarray(W, np.float64)
        np.testing.assert_allclose(ej.GradedEvents(v) @ W, vf @ w, rtol=1e-5)
        np.testing.assert_allclose(W.T @ ej.GradedEvents(v), w.T @ vf, rtol=1e-5)
        V = jnp.stack([v, jnp.roll(v, 1)])
        Vf = np.asarray(V.astype(jnp.float32), np.float64)
        np.testing.assert_allclose(ej.GradedEvents(V) @ W, Vf @ w, rtol=1e-5)
        np.testing.assert_allclose(W.T @ ej.GradedEvents(V.T), w.T @ Vf.T, rtol=1e-5)

    def test_graded_values_multiply_and_binary_events_are_positive_entries(self):
        v = jnp.asarray([2, -1, 0, 3], jnp.int8)
        np.testing.assert_allclose(ej.GradedEvents(v) @ W, v.astype(jnp.float32) @ W)
        # Semantics: a binary event is > 0 (brainevent's BinaryArray counts any non-zero).
        np.testing.assert_allclose(ej.EventArray(v) @ W, (v > 0).astype(jnp.float32) @ W)

    @pytest.mark.parametrize('left', [True, False])
    def test_gradients_are_the_float_products(self, left):
        x = jnp.asarray([2., -1., 0., 3.])
        op = (lambda w, v: ej.GradedEvents(v) @ w) if left else (lambda w, v: w.T @ ej.GradedEvents(v))
        dense = (lambda w, v: v @ w) if left else (lambda w, v: w.T @ v)
        for argnums in (0, 1):
            got = jax.grad(lambda w, v: jnp.sum(jnp.sin(op(w, v))), argnums=argnums)(W, x)
            want = jax.grad(lambda w, v: jnp.sum(jnp.sin(dense(w, v))), argnums=argnums)(W, x)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

    def test_under_jit(self):
        x = ej.GradedEvents(jnp.asarray([0, 2, 1, 0], jnp.int8))
        np.testing.assert_allclose(jax.jit(lambda e, w: e @ w)(x, W), jnp.asarray([0., 2., 1., 0.]) @ W)
