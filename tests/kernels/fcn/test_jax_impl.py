"""The fast ``jax`` FCN kernels on every event capacity they switch between, under jit, vmap and grad."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.fcn import jax_impl
from tests.kernels.reference_semantics import fcn_product, is_event

# The fast kernels start at jax_impl.SMALL connections; these tests lower that bound so small
# problems (cheap to draw and to compare) take every fast branch.
FAST_FROM = 4096


@pytest.fixture(autouse=True)
def _fast_kernels_from_4096(monkeypatch):
    monkeypatch.setattr(jax_impl, 'SMALL', FAST_FROM)


M, N, K = 512, 384, 8  # M * K connections: just enough for the fast kernels


def structure(homogeneous=False, seed=0):
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, N, (M, K)).astype(np.int32)
    assert M * K >= FAST_FROM
    indices[::7, 1] = -1  # dropped: never read, never wrapped
    indices[3::11, 2] = N + 3
    weights = rng.normal(size=(1,) if homogeneous else (M, K)).astype(np.float32)
    return weights, indices


def events(count, seed=1, matrix=False):
    """``count`` events over the rows (a matrix: over its rows and 3 columns together)."""
    rng = np.random.default_rng(seed)
    mask = np.zeros(M * 3 if matrix else M, bool)
    mask[rng.choice(mask.size, count, replace=False)] = True
    return mask.reshape(M, 3) if matrix else mask


@functools.cache
def jitted(matrix):
    fn = ej.binary_fcnmm if matrix else ej.binary_fcnmv
    return jax.jit(lambda w, i, x: fn(w, i, x, shape=(M, N), transpose=True, backend='jax'))


def check(x, homogeneous=False, weights=None):
    w, indices = structure(homogeneous)
    w = w if weights is None else weights
    got = jitted(x.ndim == 2)(w, indices, jnp.asarray(x))
    want = fcn_product(w, indices, x, (M, N), True, True)
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=1e-5, atol=1e-5)


class TestEventRows:
    @pytest.mark.parametrize('homogeneous', [False, True])
    @pytest.mark.parametrize('count', [0, 5, 40, 200, 400])  # capacity 16, 64, 256, then every row
    def test_each_capacity_matches_numpy(self, count, homogeneous):
        check(events(count), homogeneous)

    @pytest.mark.parametrize('count', [2, 20, 100, 600])  # flat events: capacity 12, 48, 192 (up to M), then all
    def test_matrix_events_match_numpy(self, count):
        check(events(count, matrix=True))

    def test_nan_weights_of_rows_without_events_add_nothing(self):
        w, _ = structure()
        x = events(5)
        check(x, weights=np.where(x[:, None], w, np.nan).astype(np.float32))


class TestTransforms:
    def test_vmap_over_events_matches_numpy(self):
        w, indices = structure()
        xs = np.stack([events(c) for c in (0, 5, 40, 400)])
        fn = jax.jit(jax.vmap(lambda s: ej.binary_fcnmv(w, indices, s, shape=(M, N), transpose=True, backend='jax')))
        for row, x in zip(fn(jnp.asarray(xs)), xs):
            np.testing.assert_allclose(row, fcn_product(w, indices, x, (M, N), True, True), rtol=1e-5, atol=1e-5)

    def test_grad_matches_numpy(self):
        w, indices = structure()
        x = events(5)
        ct = np.random.default_rng(4).normal(size=N).astype(np.float32)
        loss = lambda w: jnp.vdot(ej.binary_fcnmv(w, indices, x, shape=(M, N), transpose=True, backend='jax'), ct)
        kept = (indices >= 0) & (indices < N)
        want = np.where(kept & is_event(x)[:, None], ct[np.clip(indices, 0, N - 1)], 0)
        np.testing.assert_allclose(jax.jit(jax.grad(loss))(w), want, rtol=1e-6)


class TestGather:
    """``A @ x`` with a vector: one gather that drops a column outside ``[0, n)``."""

    @staticmethod
    def spikes(dtype=bool, seed=2):
        rng = np.random.default_rng(seed)
        s = rng.random(N) < 0.1
        if dtype is bool:
            return s
        # Numeric events: > 0 only; NaN and negative values are not events.
        return np.where(s, rng.uniform(0.5, 2.0, N), rng.choice([0.0, -1.0, np.nan], N)).astype(dtype)

    @pytest.mark.parametrize('homogeneous', [False, True])
    @pytest.mark.parametrize('dtype', [bool, np.float32])
    def test_matches_numpy_with_dropped_columns(self, homogeneous, dtype):
        w, indices = structure(homogeneous)
        x = self.spikes(dtype)
        got = jax.jit(lambda w, i, x: ej.binary_fcnmv(w, i, x, shape=(M, N), backend='jax'))(w, indices, x)
        np.testing.assert_allclose(np.asarray(got, np.float64), fcn_product(w, indices, x, (M, N), False, True),
                                   rtol=1e-5, atol=1e-5)

    def test_nan_weights_without_events_and_on_dropped_columns_add_nothing(self):
        w, indices = structure()
        x = self.spikes()
        kept = (indices >= 0) & (indices < N)
        event = kept & x[np.clip(indices, 0, N - 1)]
        w = np.where(event, w, np.nan).astype(np.float32)
        got = ej.binary_fcnmv(w, indices, x, shape=(M, N), backend='jax', validate=False)
        assert np.isfinite(np.asarray(got)).all()
        np.testing.assert_allclose(np.asarray(got, np.float64), fcn_product(w, indices, x, (M, N), False, True),
                                   rtol=1e-5, atol=1e-5)

    def test_grad_matches_numpy(self):
        w, indices = structure()
        x = self.spikes()
        ct = np.random.default_rng(5).normal(size=M).astype(np.float32)
        loss = lambda w: jnp.vdot(ej.binary_fcnmv(w, indices, x, shape=(M, N), backend='jax'), ct)
        kept = (indices >= 0) & (indices < N)
        want = np.where(kept & x[np.clip(indices, 0, N - 1)], ct[:, None], 0)
        np.testing.assert_allclose(jax.jit(jax.grad(loss))(w), want, rtol=1e-6)

    def test_float_gather_matches_numpy_and_drops_nan_weights_of_dropped_columns(self):
        w, indices = structure()
        kept = (indices >= 0) & (indices < N)
        w = np.where(kept, w, np.nan).astype(np.float32)
        v = np.random.default_rng(6).normal(size=N).astype(np.float32)
        got = jax.jit(lambda w, i, v: ej.fcnmv(w, i, v, shape=(M, N), backend='jax'))(w, indices, v)
        np.testing.assert_allclose(np.asarray(got, np.float64), fcn_product(w, indices, v, (M, N), False, False),
                                   rtol=1e-5, atol=1e-5)


class TestCapacityBoundaries:
    """Each capacity exactly filled and one past it: a branch that loses its last gathered row, or
    a count test off by one, changes these results (counts strictly inside a capacity would not)."""

    def test_vector_events_at_and_past_each_capacity(self):
        for count in (0, 16, 17, 64, 65, 256, 257, M):  # capacities 16, 64, 256; then every row
            check(events(count, seed=count))
            check(events(count, seed=count), homogeneous=True)

    def test_matrix_events_at_and_past_each_capacity(self):
        for count in (0, 12, 13, 48, 49, 192, 193, M * 3):  # flat capacities 12, 48, 192 (up to M); then all
            check(events(count, seed=count, matrix=True))
