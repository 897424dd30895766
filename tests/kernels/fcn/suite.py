"""The checks every FCN operator passes; each test module subclasses :class:`FcnSuite`."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from tests.kernels.cases import as_jnp, indicator, product, random_events, tol

# (m, n, k): empty matrices, k = 0, one connection, and ordinary sizes.
SHAPES = [(0, 4, 3), (5, 4, 0), (1, 1, 1), (30, 20, 6)]
DTYPES = [np.float16, np.float32]
C = 3  # columns of B for the mm operators


def random_fcn(rng, m, n, k, *, dtype=np.float32, index_dtype=np.int32, homogeneous=False):
    """FCN ``(weights, indices)``; columns drawn with replacement, so rows hold duplicates."""
    indices = rng.integers(0, max(n, 1), size=(m, k)).astype(index_dtype)
    if m and k > 1 and n > 1:
        indices[0, 1] = indices[0, 0]  # force a duplicate
    weights = (rng.normal(size=(1,) if homogeneous else (m, k)) + 0.5).astype(dtype)
    return weights, indices


def fcn_dense(weights, indices, shape):
    """Dense NumPy form (float64); duplicates add up; a homogeneous weight broadcasts."""
    dense = np.zeros(shape)
    m, k = indices.shape
    vals = np.broadcast_to(np.asarray(weights, np.float64).reshape(-1, 1) if np.size(weights) == 1
                           else np.asarray(weights, np.float64), (m, k))
    np.add.at(dense, (np.repeat(np.arange(m), k), indices.ravel()), vals.ravel())
    return dense


class FcnSuite:
    """Subclasses set ``fn`` (the public function), ``prim``, ``events``, ``matrix``, ``mm_name``."""

    fn = staticmethod(lambda *a, **k: None)
    prim = None
    events = False
    matrix = False
    mm_name = ''

    # -- helpers -------------------------------------------------------------

    def operand(self, rng, rows, kind='float', dtype=np.float32):
        shape = (rows, C) if self.matrix else (rows,)
        if self.events:
            return random_events(rng, shape, kind)
        return rng.normal(size=shape).astype(dtype)

    def expected(self, weights, indices, x, shape, transpose):
        xs = indicator(x) if self.events else np.asarray(x, np.float64)
        return product(fcn_dense(weights, indices, shape), xs, transpose)

    def case(self, seed, mnk, transpose, homogeneous=False, dtype=np.float32, kind='bool', index_dtype=np.int32):
        rng = np.random.default_rng(seed)
        m, n, k = mnk
        weights, indices = random_fcn(rng, m, n, k, dtype=dtype, homogeneous=homogeneous, index_dtype=index_dtype)
        return weights, indices, self.operand(rng, m if transpose else n, kind, dtype)

    # -- values --------------------------------------------------------------

    @pytest.mark.parametrize('dtype', DTYPES)
    @pytest.mark.parametrize('homogeneous', [False, True])
    @pytest.mark.parametrize('transpose', [False, True])
    @pytest.mark.parametrize('mnk', SHAPES)
    def test_matches_the_dense_reference(self, backend, mnk, transpose, homogeneous, dtype):
        weights, indices, x = self.case(sum(mnk) + 2 * transpose + homogeneous, mnk, transpose, homogeneous, dtype)
        shape = mnk[:2]
        got = self.fn(*as_jnp(weights, indices, x), shape=shape, transpose=transpose, backend=backend)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(np.asarray(got, np.float64),
                                   self.expected(weights, indices, x, shape, transpose), **tol(dtype))

    @pytest.mark.parametrize('weight', [0.5, np.array([0.5], np.float32)], ids=['scalar', 'shape1'])
    def test_a_scalar_or_length_one_weight_is_homogeneous(self, backend, weight):
        _, indices, x = self.case(3, (6, 4, 3), False)
        got = self.fn(jnp.asarray(weight, jnp.float32), *as_jnp(indices, x), shape=(6, 4), backend=backend)
        np.testing.assert_allclose(got, self.expected(np.float32(0.5), indices, x, (6, 4), False), **tol(np.float32))

    @pytest.mark.parametrize('transpose', [False, True])
    def test_int64_indices_match_int32(self, backend, transpose):
        weights, indices, x = self.case(11, (8, 6, 3), transpose)
        f = functools.partial(self.fn, shape=(8, 6), transpose=transpose, backend=backend)
        with jax.enable_x64(True):
            wide = f(*as_jnp(weights, indices.astype(np.int64), x))
        np.testing.assert_allclose(wide, f(*as_jnp(weights, indices, x)), rtol=1e-6)

    def test_jit_matches_eager(self, backend):
        args = as_jnp(*self.case(1, (9, 6, 3), True))
        f = functools.partial(self.fn, shape=(9, 6), transpose=True, backend=backend)
        np.testing.assert_allclose(jax.jit(f)(*args), f(*args), rtol=1e-6)

    # -- batching ------------------------------------------------------------

    @pytest.mark.parametrize('axis', [0, 1])
    @pytest.mark.parametrize('transpose', [False, True])
    def test_vmap_over_the_operand_matches_a_loop(self, backend, transpose, axis):
        rng = np.random.default_rng(5)
        weights, indices = as_jnp(*random_fcn(rng, 8, 6, 3))
        xs = jnp.stack([jnp.asarray(self.operand(rng, 8 if transpose else 6)) for _ in range(4)], axis=axis)
        f = lambda x: self.fn(weights, indices, x, shape=(8, 6), transpose=transpose, backend=backend)
        want = jnp.stack([f(jnp.take(xs, i, axis=axis)) for i in range(4)])
        np.testing.assert_allclose(jax.vmap(f, in_axes=axis)(xs), want, rtol=1e-5, atol=1e-6)

    def test_vmap_over_the_operand_becomes_one_mm_call(self):
        weights, indices, x = as_jnp(*self.case(2, (5, 4, 2), False))
        f = lambda x: self.fn(weights, indices, x, shape=(5, 4))
        jaxpr = str(jax.make_jaxpr(jax.vmap(f))(jnp.stack([x, x])))
        assert f'{self.mm_name}[' in jaxpr and 'scan' not in jaxpr

    def test_vmap_over_the_weights_matches_a_loop(self, backend):
        weights, indices, x = as_jnp(*self.case(4, (7, 5, 3), False))
        stacked = jnp.stack([weights, 2 * weights, -weights])
        f = lambda w: self.fn(w, indices, x, shape=(7, 5), backend=backend)
        want = jnp.stack([f(w) for w in stacked])
        np.testing.assert_allclose(jax.vmap(f)(stacked), want, rtol=1e-5, atol=1e-6)

    # -- autodiff ------------------------------------------------------------

    @pytest.mark.parametrize('homogeneous', [False, True])
    @pytest.mark.parametrize('transpose', [False, True])
    def test_gradients_match_finite_differences(self, transpose, homogeneous):
        weights, indices, x = as_jnp(*self.case(6, (6, 5, 3), transpose, homogeneous, kind='float'))
        f_w = lambda w: self.fn(w, indices, x, shape=(6, 5), transpose=transpose, backend='jax')
        check_grads(f_w, (weights,), order=1, modes=('fwd', 'rev'), atol=1e-2, rtol=1e-2)
        if not self.events:
            f_x = lambda v: self.fn(weights, indices, v, shape=(6, 5), transpose=transpose, backend='jax')
            check_grads(f_x, (x,), order=1, modes=('fwd', 'rev'), atol=1e-2, rtol=1e-2)

    @pytest.mark.parametrize('wrt', [0, 2])
    @pytest.mark.parametrize('transpose', [False, True])
    def test_every_backend_has_the_reference_gradient(self, backend, transpose, wrt):
        args = as_jnp(*self.case(8, (6, 5, 3), transpose, kind='float'))
        loss = lambda b: lambda *a: jnp.sum(jnp.sin(self.fn(*a, shape=(6, 5), transpose=transpose, backend=b)))
        np.testing.assert_allclose(jax.grad(loss(backend), wrt)(*args), jax.grad(loss('jax'), wrt)(*args),
                                   rtol=1e-5, atol=1e-5)

    @pytest.mark.parametrize('wrt', [0, 2])
    @pytest.mark.parametrize('transpose', [False, True])
    def test_forward_and_reverse_mode_agree(self, backend, transpose, wrt):
        weights, indices, _ = self.case(9, (4, 4, 3), transpose)
        x = np.array([0.5, -1.0, 0.0, 2.0], np.float32)
        x = np.stack([x, x[::-1], x], axis=1) if self.matrix else x
        args = as_jnp(weights, indices, x)
        f = lambda *a: self.fn(*a, shape=(4, 4), transpose=transpose, backend=backend)
        np.testing.assert_allclose(jax.jacfwd(f, wrt)(*args), jax.jacrev(f, wrt)(*args), rtol=1e-6, atol=1e-6)

    # -- out-of-range indices -------------------------------------------------

    @pytest.mark.parametrize('transpose', [False, True])
    def test_out_of_range_indices_are_refused_when_concrete_and_dropped_when_traced(self, backend, transpose):
        weights, indices, x = self.case(12, (6, 5, 3), transpose, kind='all')
        bad = indices.copy()
        bad[2, 1], bad[4, 0] = 5, -1
        with pytest.raises(ValueError, match=r'indices\[2, 1\] = 5 is outside \[0, 5\)'):
            self.fn(*as_jnp(weights, bad, x), shape=(6, 5), transpose=transpose, backend=backend)
        call = jax.jit(lambda *a: self.fn(*a, shape=(6, 5), transpose=transpose, backend=backend))
        # Every backend drops the connections that point nowhere.
        kept = weights.copy()
        kept[2, 1] = kept[4, 0] = 0
        np.testing.assert_allclose(call(*as_jnp(weights, bad, x)),
                                   self.expected(kept, np.clip(bad, 0, 4), x, (6, 5), transpose), **tol(np.float32))


class BinaryFcnSuite(FcnSuite):
    """The checks that only event operands have, on top of :class:`FcnSuite`."""

    events = True

    @pytest.mark.parametrize('kind', ['bool', 'float', 'none', 'all'])
    @pytest.mark.parametrize('transpose', [False, True])
    def test_events_of_every_kind(self, backend, kind, transpose):
        weights, indices, x = self.case(7, (12, 9, 4), transpose, kind=kind)
        got = self.fn(*as_jnp(weights, indices, x), shape=(12, 9), transpose=transpose, backend=backend)
        np.testing.assert_allclose(got, self.expected(weights, indices, x, (12, 9), transpose), **tol(np.float32))

    def test_derivative_wrt_events_is_the_float_operators(self):
        weights, indices, x = as_jnp(*self.case(10, (6, 5, 3), False, kind='float'))
        g = jax.grad(lambda s: self.fn(weights, indices, s, shape=(6, 5)).sum())(x)
        dense = fcn_dense(np.asarray(weights), np.asarray(indices), (6, 5))
        want = dense.sum(0) if not self.matrix else np.broadcast_to(dense.sum(0)[:, None], x.shape)
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)
        assert g.dtype == x.dtype
