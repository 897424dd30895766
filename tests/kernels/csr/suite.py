"""The checks every CSR operator passes; each test module subclasses :class:`CsrSuite`."""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.test_util import check_grads

from tests.kernels.cases import (
    as_jnp,
    csr_dense,
    indicator,
    product,
    random_csr,
    random_events,
    tol,
)

SHAPES = [(0, 4), (4, 0), (1, 1), (30, 20)]
K = 3  # columns of B for the mm operators


class CsrSuite:
    """Subclasses set ``fn`` (the public function), ``prim``, ``events``, ``matrix``, ``mm_name``."""

    fn = staticmethod(lambda *a, **k: None)
    prim = None
    events = False
    matrix = False
    mm_name = ''

    # -- helpers -------------------------------------------------------------

    def operand(self, rng, rows, kind='float', dtype=np.float32):
        shape = (rows, K) if self.matrix else (rows,)
        if self.events:
            return random_events(rng, shape, kind)
        return rng.normal(size=shape).astype(dtype)

    def expected(self, data, indices, indptr, x, shape, transpose):
        xs = indicator(x) if self.events else np.asarray(x, np.float64)
        return product(csr_dense(data, indices, indptr, shape), xs, transpose)

    def case(self, seed, shape, transpose, homogeneous=False, dtype=np.float32, kind='bool'):
        rng = np.random.default_rng(seed)
        data, indices, indptr = random_csr(rng, *shape, dtype=dtype, homogeneous=homogeneous)
        x = self.operand(rng, shape[0] if transpose else shape[1], kind, dtype)
        return data, indices, indptr, x

    # -- values --------------------------------------------------------------

    @pytest.mark.parametrize('homogeneous', [False, True])
    @pytest.mark.parametrize('transpose', [False, True])
    @pytest.mark.parametrize('shape', SHAPES)
    def test_matches_the_dense_reference(self, backend, shape, transpose, homogeneous):
        self.check_case(backend, shape, transpose, homogeneous, np.float32)

    @pytest.mark.parametrize('transpose', [False, True])
    def test_float16_accumulates_accurately(self, backend, transpose):
        self.check_case(backend, (30, 20), transpose, False, np.float16)

    def check_case(self, backend, shape, transpose, homogeneous, dtype):
        data, indices, indptr, x = self.case(sum(shape) + 2 * transpose + homogeneous, shape,
                                             transpose, homogeneous, dtype)
        got = self.fn(*as_jnp(data, indices, indptr, x), shape=shape, transpose=transpose, backend=backend)
        assert got.dtype == np.dtype(dtype)
        np.testing.assert_allclose(np.asarray(got, np.float64),
                                   self.expected(data, indices, indptr, x, shape, transpose), **tol(dtype))

    def test_a_scalar_weight_is_homogeneous(self, backend):
        _, indices, indptr, x = self.case(3, (6, 4), False)
        got = self.fn(jnp.float32(0.5), *as_jnp(indices, indptr, x), shape=(6, 4), backend=backend)
        want = self.expected(np.float32(0.5), indices, indptr, x, (6, 4), False)
        np.testing.assert_allclose(got, want, **tol(np.float32))

    def test_jit_matches_eager(self, backend):
        args = as_jnp(*self.case(1, (9, 6), True))
        f = functools.partial(self.fn, shape=(9, 6), transpose=True, backend=backend)
        np.testing.assert_allclose(jax.jit(f)(*args), f(*args), rtol=1e-6)

    # -- batching ------------------------------------------------------------

    @pytest.mark.parametrize('axis', [0, 1])
    @pytest.mark.parametrize('transpose', [False, True])
    def test_vmap_over_the_operand_matches_a_loop(self, backend, transpose, axis):
        rng = np.random.default_rng(5)
        data, indices, indptr = as_jnp(*random_csr(rng, 8, 6))
        xs = jnp.stack([jnp.asarray(self.operand(rng, 8 if transpose else 6)) for _ in range(4)], axis=axis)
        f = lambda x: self.fn(data, indices, indptr, x, shape=(8, 6), transpose=transpose, backend=backend)
        want = jnp.stack([f(jnp.take(xs, i, axis=axis)) for i in range(4)])
        np.testing.assert_allclose(jax.vmap(f, in_axes=axis)(xs), want, rtol=1e-5, atol=1e-6)

    def test_vmap_over_the_operand_becomes_one_mm_call(self):
        data, indices, indptr, x = as_jnp(*self.case(2, (5, 4), False))
        f = lambda x: self.fn(data, indices, indptr, x, shape=(5, 4))
        jaxpr = str(jax.make_jaxpr(jax.vmap(f))(jnp.stack([x, x])))
        assert f'{self.mm_name}[' in jaxpr and 'scan' not in jaxpr

    def test_vmap_over_the_weights_matches_a_loop(self, backend):
        data, indices, indptr, x = as_jnp(*self.case(4, (7, 5), False))
        datas = jnp.stack([data, 2 * data, -data])
        f = lambda d: self.fn(d, indices, indptr, x, shape=(7, 5), backend=backend)
        want = jnp.stack([f(d) for d in datas])
        np.testing.assert_allclose(jax.vmap(f)(datas), want, rtol=1e-5, atol=1e-6)

    # -- autodiff ------------------------------------------------------------

    @pytest.mark.parametrize('homogeneous', [False, True])
    @pytest.mark.parametrize('transpose', [False, True])
    def test_gradients_match_finite_differences(self, transpose, homogeneous):
        data, indices, indptr, x = as_jnp(*self.case(6, (6, 5), transpose, homogeneous, kind='float'))
        f_data = lambda d: self.fn(d, indices, indptr, x, shape=(6, 5), transpose=transpose, backend='jax')
        check_grads(f_data, (data,), order=1, modes=('fwd', 'rev'), atol=1e-2, rtol=1e-2)
        if not self.events:
            f_x = lambda v: self.fn(data, indices, indptr, v, shape=(6, 5), transpose=transpose, backend='jax')
            check_grads(f_x, (x,), order=1, modes=('fwd', 'rev'), atol=1e-2, rtol=1e-2)

    @pytest.mark.parametrize('wrt', [0, 3])
    @pytest.mark.parametrize('transpose', [False, True])
    def test_every_backend_has_the_reference_gradient_and_jvp(self, backend, transpose, wrt):
        args = as_jnp(*self.case(8, (6, 5), transpose, kind='float'))
        loss = lambda b: lambda *a: jnp.sum(jnp.sin(self.fn(*a, shape=(6, 5), transpose=transpose, backend=b)))
        np.testing.assert_allclose(jax.grad(loss(backend), wrt)(*args), jax.grad(loss('jax'), wrt)(*args),
                                   rtol=1e-5, atol=1e-5)
        tangent = jnp.ones_like(args[wrt])
        jvp = lambda b: jax.jvp(lambda a: loss(b)(*args[:wrt], a, *args[wrt + 1:]), (args[wrt],), (tangent,))[1]
        np.testing.assert_allclose(jvp(backend), jvp('jax'), rtol=1e-5, atol=1e-5)

    @pytest.mark.parametrize('wrt', [0, 3])
    def test_forward_and_reverse_mode_agree(self, backend, wrt):
        data, indices, indptr, _ = self.case(9, (4, 4), True)
        x = np.array([0.5, -1.0, 0.0, 2.0], np.float32)
        x = np.stack([x, x[::-1], x], axis=1) if self.matrix else x
        args = as_jnp(data, indices, indptr, x)
        f = lambda *a: self.fn(*a, shape=(4, 4), transpose=True, backend=backend)
        np.testing.assert_allclose(jax.jacfwd(f, wrt)(*args), jax.jacrev(f, wrt)(*args), rtol=1e-6, atol=1e-6)


class BinaryCsrSuite(CsrSuite):
    """The extra checks of the binary (event) operators."""

    events = True

    @pytest.mark.parametrize('kind', ['bool', 'float', 'none', 'all'])
    @pytest.mark.parametrize('transpose', [False, True])
    def test_events_of_every_kind(self, backend, kind, transpose):
        data, indices, indptr, x = self.case(7, (12, 9), transpose, kind=kind)
        got = self.fn(*as_jnp(data, indices, indptr, x), shape=(12, 9), transpose=transpose, backend=backend)
        np.testing.assert_allclose(got, self.expected(data, indices, indptr, x, (12, 9), transpose), **tol(np.float32))

    def test_derivative_wrt_events_is_the_float_operators(self):
        data, indices, indptr, x = as_jnp(*self.case(10, (6, 5), False, kind='float'))
        g = jax.grad(lambda s: self.fn(data, indices, indptr, s, shape=(6, 5)).sum())(x)
        dense = csr_dense(*(np.asarray(a) for a in (data, indices, indptr)), (6, 5))
        want = dense.sum(0) if not self.matrix else np.broadcast_to(dense.sum(0)[:, None], x.shape)
        np.testing.assert_allclose(g, want, rtol=1e-5, atol=1e-5)
        assert g.dtype == x.dtype
