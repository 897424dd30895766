"""The checks both dense operators pass; each test module subclasses :class:`DenseSuite`."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from tests.kernels.cases import EVENT_KINDS, as_jnp, indicator, product, random_events, tol

SHAPES = [(0, 4), (4, 0), (1, 1), (9, 6)]
K = 3


class DenseSuite:
    """Subclasses set ``fn``, ``prim``, ``matrix`` and ``mm_name``."""

    fn = staticmethod(lambda *a, **k: None)
    prim = None
    matrix = False
    mm_name = ''

    def case(self, seed, shape, transpose, dtype=np.float32, kind='bool'):
        rng = np.random.default_rng(seed)
        weights = rng.normal(size=shape).astype(dtype)
        rows = shape[0] if transpose else shape[1]
        return weights, random_events(rng, (rows, K) if self.matrix else (rows,), kind)

    @pytest.mark.parametrize('transpose', [False, True])
    @pytest.mark.parametrize('shape', SHAPES)
    def test_matches_the_dense_reference(self, backend, shape, transpose):
        self.check_case(backend, shape, transpose, np.float32, 'bool')

    @pytest.mark.parametrize('kind', EVENT_KINDS)
    @pytest.mark.parametrize('transpose', [False, True])
    def test_events_of_every_kind(self, backend, transpose, kind):
        self.check_case(backend, (9, 6), transpose, np.float32, kind)

    @pytest.mark.parametrize('transpose', [False, True])
    def test_float16_accumulates_accurately(self, backend, transpose):
        self.check_case(backend, (9, 6), transpose, np.float16, 'float')

    def check_case(self, backend, shape, transpose, dtype, kind):
        weights, spikes = self.case(len(kind) + shape[0], shape, transpose, dtype, kind)
        got = self.fn(*as_jnp(weights, spikes), transpose=transpose, backend=backend)
        assert got.dtype == np.dtype(dtype)
        want = product(weights.astype(np.float64), indicator(spikes), transpose)
        np.testing.assert_allclose(np.asarray(got, np.float64), want, **tol(dtype))

    def test_jit_matches_eager(self, backend):
        args = as_jnp(*self.case(1, (7, 5), True))
        f = functools.partial(self.fn, transpose=True, backend=backend)
        np.testing.assert_allclose(jax.jit(f)(*args), f(*args), rtol=1e-6)

    @pytest.mark.parametrize('axis', [0, 1])
    def test_vmap_over_the_events_matches_a_loop(self, backend, axis):
        weights, _ = as_jnp(*self.case(2, (6, 5), False))
        rng = np.random.default_rng(3)
        xs = jnp.asarray(random_events(rng, (4, 5, K) if self.matrix else (4, 5), 'float'))
        xs = jnp.moveaxis(xs, 0, axis)
        f = lambda s: self.fn(weights, s, backend=backend)
        want = jnp.stack([f(jnp.take(xs, i, axis=axis)) for i in range(4)])
        np.testing.assert_allclose(jax.vmap(f, in_axes=axis)(xs), want, rtol=1e-5, atol=1e-6)

    def test_vmap_over_the_events_becomes_one_mm_call(self):
        weights, spikes = as_jnp(*self.case(2, (5, 4), False))
        jaxpr = str(jax.make_jaxpr(jax.vmap(lambda s: self.fn(weights, s)))(jnp.stack([spikes, spikes])))
        assert f'{self.mm_name}[' in jaxpr and 'scan' not in jaxpr

    def test_vmap_over_the_weights_matches_a_loop(self, backend):
        weights, spikes = as_jnp(*self.case(4, (6, 5), False))
        ws = jnp.stack([weights, -weights])
        f = lambda w: self.fn(w, spikes, backend=backend)
        np.testing.assert_allclose(jax.vmap(f)(ws), jnp.stack([f(w) for w in ws]), rtol=1e-5, atol=1e-6)

    @pytest.mark.parametrize('transpose', [False, True])
    def test_gradients_match_finite_differences(self, transpose):
        weights, spikes = as_jnp(*self.case(5, (5, 4), transpose, kind='float'))
        f = lambda w: self.fn(w, spikes, transpose=transpose, backend='jax')
        check_grads(f, (weights,), order=1, modes=('fwd', 'rev'), atol=1e-2, rtol=1e-2)

    @pytest.mark.parametrize('wrt', [0, 1])
    @pytest.mark.parametrize('transpose', [False, True])
    def test_every_backend_has_the_reference_gradient(self, backend, transpose, wrt):
        args = as_jnp(*self.case(6, (5, 4), transpose, kind='float'))
        loss = lambda b: lambda *a: jnp.sum(jnp.sin(self.fn(*a, transpose=transpose, backend=b)))
        np.testing.assert_allclose(jax.grad(loss(backend), wrt)(*args), jax.grad(loss('jax'), wrt)(*args),
                                   rtol=1e-5, atol=1e-5)

    @pytest.mark.parametrize('wrt', [0, 1])
    def test_forward_and_reverse_mode_agree(self, backend, wrt):
        weights, _ = self.case(7, (4, 3), True)
        x = np.array([0.5, -1.0, 0.0, 2.0], np.float32)
        x = np.stack([x, x[::-1]], axis=1) if self.matrix else x
        f = lambda *a: self.fn(*a, transpose=True, backend=backend)
        args = as_jnp(weights, x)
        np.testing.assert_allclose(jax.jacfwd(f, wrt)(*args), jax.jacrev(f, wrt)(*args), rtol=1e-6, atol=1e-6)

    def test_derivative_wrt_events_is_the_float_products(self):
        weights, spikes = as_jnp(*self.case(8, (5, 4), False, kind='float'))
        g = jax.grad(lambda s: self.fn(weights, s).sum())(spikes)
        want = np.asarray(weights).sum(0)
        np.testing.assert_allclose(g, want[:, None] * np.ones(K) if self.matrix else want, rtol=1e-5)
