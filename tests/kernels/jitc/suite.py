"""The checks every JITC operator passes; each test module subclasses :class:`JitcSuite`."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from tests.kernels.cases import indicator, product, random_events, tol
from tests.kernels.conftest import backends_of
from tests.kernels.jitc.dense import LAWS, jitc_dense

SHAPES = [(0, 4), (5, 0), (1, 1)]
# One shape for almost every check: the jax reference compiles once per shape, law, direction and dtype,
# and that compile, not the arithmetic, is what these tests cost.
SHAPE = (12, 9)
# Every law and both directions, without the full cross product.
LAW_DIRECTIONS = [('homo', True), ('uniform', False), ('normal', True)]
PROB = 0.3
C = 3  # columns of B for the mm operators


class JitcSuite:
    """Subclasses set ``fn`` (the public function), ``prim``, ``events``, ``matrix``, ``mm_name``."""

    fn = staticmethod(lambda *a, **k: None)
    prim = None
    events = False
    matrix = False
    mm_name = ''

    def operand(self, rng, rows, kind='bool', dtype=np.float32):
        shape = (rows, C) if self.matrix else (rows,)
        if self.events:
            return random_events(rng, shape, kind)
        return rng.normal(size=shape).astype(dtype)

    def expected(self, law, x, shape, transpose, seed=3, prob=PROB, dtype=np.float32):
        dense = jitc_dense(LAWS[law], seed=seed, prob=prob, shape=shape, law=law, dtype=dtype).astype(np.float64)
        xs = indicator(x) if self.events else np.asarray(x, np.float64)
        return product(dense, xs, transpose)

    def call(self, law, x, shape, transpose=False, backend=None, seed=3, prob=PROB, weights=None):
        weights = LAWS[law] if weights is None else weights
        return self.fn(weights, x, seed=seed, prob=prob, shape=shape, law=law, transpose=transpose,
                       backend=backend)

    # -- values --------------------------------------------------------------

    @pytest.mark.parametrize(('law', 'transpose'), LAW_DIRECTIONS)
    def test_matches_the_dense_numpy_matrix(self, backend, law, transpose):
        self.check_dense(backend, law, SHAPE, transpose)

    def test_empty_and_tiny_shapes(self, backend):
        for shape in SHAPES:
            self.check_dense(backend, 'homo', shape, True)
            self.check_dense(backend, 'homo', shape, False)

    def check_dense(self, backend, law, shape, transpose):
        x = self.operand(np.random.default_rng(sum(shape)), shape[0] if transpose else shape[1])
        got = self.call(law, jnp.asarray(x), shape, transpose, backend)
        assert got.dtype == np.float32
        np.testing.assert_allclose(np.asarray(got, np.float64), self.expected(law, x, shape, transpose),
                                   **tol(np.float32))

    def test_float16_weights_sum_in_float32(self, backend):
        transpose = True
        x = self.operand(np.random.default_rng(1), SHAPE[0] if transpose else SHAPE[1], dtype=np.float16)
        weights = tuple(np.float16(w) for w in LAWS['uniform'])
        got = self.call('uniform', jnp.asarray(x), SHAPE, transpose, backend, weights=weights)
        assert got.dtype == np.float16
        np.testing.assert_allclose(np.asarray(got, np.float64),
                                   self.expected('uniform', x, SHAPE, transpose, dtype=np.float16),
                                   **tol(np.float16))

    def test_prob_zero_is_empty_and_prob_one_is_dense(self, backend):
        x = self.operand(np.random.default_rng(2), SHAPE[1], kind='all')
        for prob in (0.0, 1.0):
            got = self.call('homo', jnp.asarray(x), SHAPE, backend=backend, prob=prob)
            want = prob * 1.5 * (indicator(x) if self.events else np.asarray(x, np.float64)).sum(0)
            np.testing.assert_allclose(got, np.broadcast_to(want, got.shape), rtol=1e-5, atol=1e-5)

    def test_jit_matches_eager(self, backend):
        x = jnp.asarray(self.operand(np.random.default_rng(4), SHAPE[0]))
        f = functools.partial(self.call, 'normal', shape=SHAPE, transpose=True, backend=backend)
        np.testing.assert_allclose(jax.jit(f)(x), f(x), rtol=1e-6, atol=1e-6)

    # -- batching ------------------------------------------------------------

    def test_vmap_over_the_operand_matches_a_loop(self, backend):
        transpose = True
        rng = np.random.default_rng(5)
        xs = jnp.stack([jnp.asarray(self.operand(rng, SHAPE[0] if transpose else SHAPE[1])) for _ in range(3)])
        f = lambda x: self.call('uniform', x, SHAPE, transpose, backend)
        np.testing.assert_allclose(jax.vmap(f)(xs), jnp.stack([f(x) for x in xs]), rtol=1e-5, atol=1e-6)

    def test_vmap_over_the_operand_becomes_one_mm_call(self):
        x = jnp.asarray(self.operand(np.random.default_rng(6), 4))
        f = lambda x: self.call('homo', x, (5, 4))
        jaxpr = str(jax.make_jaxpr(jax.vmap(f))(jnp.stack([x, x])))
        assert f'{self.mm_name}[' in jaxpr and 'scan' not in jaxpr

    def test_vmap_over_seeds_matches_a_loop(self, backend):
        x = jnp.asarray(self.operand(np.random.default_rng(7), SHAPE[1], kind='all'))
        f = lambda s: self.call('normal', x, SHAPE, backend=backend, seed=s)
        got = jax.jit(jax.vmap(f))(jnp.arange(4, dtype=jnp.int32))
        want = np.stack([self.expected('normal', np.asarray(x), SHAPE, False, seed=s) for s in range(4)])
        np.testing.assert_allclose(got, want, **tol(np.float32))
        assert not np.allclose(got[0], got[1])

    # -- autodiff ------------------------------------------------------------

    @pytest.mark.parametrize(('law', 'transpose'), [('uniform', False), ('normal', True)])
    def test_gradients_match_finite_differences(self, law, transpose):
        x = jnp.asarray(self.operand(np.random.default_rng(8), SHAPE[0] if transpose else SHAPE[1], kind='float'))
        params = jnp.asarray(LAWS[law], jnp.float32).reshape(-1)
        as_weights = (lambda p: p[0]) if law == 'homo' else (lambda p: (p[0], p[1]))
        f_w = lambda p: self.call(law, x, SHAPE, transpose, 'jax', weights=as_weights(p))
        check_grads(f_w, (params,), order=1, modes=('fwd', 'rev'), atol=1e-2, rtol=1e-2)
        if not self.events:
            f_x = lambda v: self.call(law, v, SHAPE, transpose, 'jax')
            check_grads(f_x, (x,), order=1, modes=('fwd', 'rev'), atol=1e-2, rtol=1e-2)

    def test_every_backend_has_the_reference_gradient(self):
        others = [b for b in backends_of(self.prim) if b != 'jax']  # jax is the reference
        assert others
        transpose = True
        x = jnp.asarray(self.operand(np.random.default_rng(9), SHAPE[0] if transpose else SHAPE[1], kind='float'))
        params = jnp.asarray(LAWS['uniform'], jnp.float32)

        def loss(b):
            return lambda p, v: jnp.sum(jnp.sin(self.call('uniform', v, SHAPE, transpose, b, weights=(p[0], p[1]))))
        want = jax.grad(loss('jax'), (0, 1))(params, x)
        for backend in others:
            got = jax.grad(loss(backend), (0, 1))(params, x)
            for g, w in zip(got, want, strict=True):  # the weights' gradient, then the operand's
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=backend)

    def test_the_gradient_wrt_the_operand_is_the_transposed_product(self, backend):
        x = jnp.asarray(self.operand(np.random.default_rng(10), SHAPE[1], kind='float'))
        g = jax.grad(lambda v: self.call('normal', v, SHAPE, backend=backend).sum())(x)
        dense = jitc_dense(LAWS['normal'], seed=3, prob=PROB, shape=SHAPE, law='normal').astype(np.float64)
        want = dense.sum(0) if not self.matrix else np.broadcast_to(dense.sum(0)[:, None], x.shape)
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)
        assert g.dtype == x.dtype


class FloatJitcSuite(JitcSuite):
    """Float operands: dtype promotion and IEEE products."""

    def test_float16_weights_and_a_float32_operand_give_float32(self, backend):
        x = jnp.asarray(self.operand(np.random.default_rng(11), SHAPE[1]))
        with jax.numpy_dtype_promotion('standard'):
            got = self.call('homo', x, SHAPE, backend=backend, weights=np.float16(1.5))
        assert got.dtype == np.float32
        np.testing.assert_allclose(got, self.expected('homo', np.asarray(x), SHAPE, False), **tol(np.float32))

    def test_a_nan_in_the_operand_reaches_every_row_connected_to_it(self, backend):
        x = np.ones((SHAPE[1], C) if self.matrix else SHAPE[1], np.float32)
        x[4] = np.nan
        got = np.asarray(self.call('homo', jnp.asarray(x), SHAPE, backend=backend))
        dense = jitc_dense(1.5, seed=3, prob=PROB, shape=SHAPE, law='homo')
        assert dense[:, 4].any() and not dense[:, 4].all()
        np.testing.assert_array_equal(np.isnan(got).any(axis=-1) if self.matrix else np.isnan(got), dense[:, 4] != 0)


class BinaryJitcSuite(JitcSuite):
    """The checks that only event operands have."""

    events = True

    # Bool events in both directions are every other test's operand; here the other kinds, both directions.
    @pytest.mark.parametrize(('kind', 'transpose'), [('float', False), ('float', True), ('none', True),
                                                     ('all', False)])
    def test_events_of_every_kind(self, backend, kind, transpose):
        x = self.operand(np.random.default_rng(12), SHAPE[0] if transpose else SHAPE[1], kind=kind)
        got = self.call('normal', jnp.asarray(x), SHAPE, transpose, backend)
        np.testing.assert_allclose(got, self.expected('normal', x, SHAPE, transpose), **tol(np.float32))

    def test_nan_weights_without_events_contribute_nothing(self, backend):
        for transpose in (False, True):
            x = np.zeros((SHAPE[0] if transpose else SHAPE[1], *((C,) if self.matrix else ())), np.float32)
            x[0] = np.nan  # NaN is not an event
            got = self.call('homo', jnp.asarray(x), SHAPE, transpose, backend, weights=np.float32(np.nan))
            np.testing.assert_array_equal(got, np.zeros_like(got))
