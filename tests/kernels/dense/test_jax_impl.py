"""The fast ``jax`` dense event kernels: each event capacity, and non-finite weights, against NumPy."""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.dense.jax_impl import SMALL

M, N = 256, 320  # M * N weights: enough for the fast kernels


def weights(non_finite=False):
    assert M * N >= SMALL
    w = np.random.default_rng(0).normal(size=(M, N)).astype(np.float32)
    if non_finite:
        w[1, 2], w[5, 7], w[9, 2] = np.nan, np.inf, -np.inf
    return w


def events(count, rows, matrix=False, seed=1):
    rng = np.random.default_rng(seed)
    mask = np.zeros(rows * 3 if matrix else rows, bool)
    mask[rng.choice(mask.size, count, replace=False)] = True
    return mask.reshape(rows, 3) if matrix else mask


def expected(w, s, transpose):
    """Sums of the selected weights in float64 (a weight without an event is never read)."""
    w = np.asarray(w, np.float64)
    s = s[:, None] if s.ndim == 1 else s
    lines = w if transpose else w.T  # one line per event index
    out = np.stack([lines[s[:, c]].sum(axis=0) for c in range(s.shape[1])], axis=1)
    return out[:, 0] if out.shape[1] == 1 else out


@functools.cache
def jitted(matrix, transpose):
    fn = ej.binary_densemm if matrix else ej.binary_densemv
    return jax.jit(lambda w, s: fn(w, s, transpose=transpose, backend='jax'))


def check(w, s, transpose):
    got = jitted(s.ndim == 2, transpose)(w, jnp.asarray(s))
    np.testing.assert_allclose(np.asarray(got, np.float64), expected(w, s, transpose), rtol=1e-5, atol=1e-5)


class TestEventRows:
    @pytest.mark.parametrize('count', [0, 5, 20, 100, 200])  # capacity 8, 32, 128, then every row
    def test_each_capacity_matches_numpy(self, count):
        check(weights(), events(count, M), True)
        check(weights(non_finite=True), events(count, M), True)

    # Over 3 columns; the busiest column picks the capacity: 8, 32, 128, then every row.
    @pytest.mark.parametrize('count', [2, 50, 150, 600])
    def test_matrix_events_match_numpy(self, count):
        check(weights(), events(count, M, matrix=True), True)
        check(weights(non_finite=True), events(count, M, matrix=True), True)

    def test_matrix_events_in_chunks_match_numpy(self, monkeypatch):
        # Past _GATHER_ENTRIES gathered weights the columns go through lax.map in chunks.
        from eventjax.kernels.dense import jax_impl
        monkeypatch.setattr(jax_impl, '_GATHER_ENTRIES', 2 * 32 * N)  # two columns per chunk at capacity 32
        w, s = weights(non_finite=True), events(50, M, matrix=True, seed=3)
        got = jax.jit(lambda w, s: ej.binary_densemm(w, s, transpose=True, backend='jax'))(w, jnp.asarray(s))
        np.testing.assert_allclose(np.asarray(got, np.float64), expected(w, s, True), rtol=1e-5, atol=1e-5)


class TestProduct:
    @pytest.mark.parametrize('matrix', [False, True])
    def test_non_finite_weights_count_only_where_selected(self, matrix):
        w = weights(non_finite=True)
        for count in (0, 5, 200):
            check(w, events(count, N, matrix=matrix), False)
        check(weights(), events(5, N, matrix=matrix), False)


class TestEventColumns:
    """``W @ s`` with at most n/128 events gathers the event columns; the shape is the smallest with such a capacity."""

    W_ROWS, W_COLS = 64, 1024  # capacity 8 = 1024 / 128

    def setup_method(self):
        rng = np.random.default_rng(4)
        self.w = rng.normal(size=(self.W_ROWS, self.W_COLS)).astype(np.float32)
        self.bad = self.w.copy()
        self.bad[3, 100], self.bad[7, 900], self.bad[9, 5] = np.nan, np.inf, -np.inf

    @pytest.mark.parametrize('count', [0, 1, 8, 9, 40])  # 8 fits the capacity, 9 and 40 take the product
    def test_each_side_of_the_capacity_matches_numpy(self, count):
        s = events(count, self.W_COLS, seed=count)
        check(self.w, s, False)
        check(self.bad, s, False)

    def test_a_selected_non_finite_weight_shows_and_an_unselected_one_does_not(self):
        s = np.zeros(self.W_COLS, bool)
        s[[5, 100, 512]] = True  # column 100 holds row 3's NaN, column 5 row 9's -inf; 900 (inf) is silent
        got = np.asarray(jitted(False, False)(self.bad, jnp.asarray(s)))
        assert np.isnan(got[3]) and got[9] == -np.inf and np.isfinite(got[7])
        check(self.bad, s, False)

    def test_a_gather_past_the_entry_bound_takes_the_product(self, monkeypatch):
        from eventjax.kernels.dense import jax_impl
        monkeypatch.setattr(jax_impl, '_COLUMN_ENTRIES', 8 * self.W_ROWS - 1)
        s = events(4, self.W_COLS, seed=5)
        got = jax.jit(lambda w, s: ej.binary_densemv(w, s, transpose=False, backend='jax'))(self.bad, jnp.asarray(s))
        np.testing.assert_allclose(np.asarray(got, np.float64), expected(self.bad, s, False), rtol=1e-5, atol=1e-5)

    def test_vmap_and_grad_match_numpy(self):
        ss = np.stack([events(c, self.W_COLS, seed=c) for c in (0, 3, 8, 30)])
        fn = lambda w, s: ej.binary_densemv(w, s, transpose=False, backend='jax')
        got = jax.jit(jax.vmap(fn, in_axes=(None, 0)))(self.w, jnp.asarray(ss))
        for row, s in zip(got, ss):
            np.testing.assert_allclose(row, expected(self.w, s, False), rtol=1e-5, atol=1e-5)
        ct = np.random.default_rng(6).normal(size=self.W_ROWS).astype(np.float32)
        s = events(6, self.W_COLS, seed=6)
        grad = jax.jit(jax.grad(lambda w: jnp.vdot(fn(w, s), ct)))(self.w)
        np.testing.assert_allclose(grad, np.outer(ct, s), rtol=1e-6)


def test_vmap_and_grad_match_numpy():
    w = weights()
    ss = np.stack([events(c, M) for c in (0, 5, 20, 200)])
    got = jax.jit(jax.vmap(lambda s: ej.binary_densemv(w, s, transpose=True, backend='jax')))(jnp.asarray(ss))
    for row, s in zip(got, ss):
        np.testing.assert_allclose(row, expected(w, s, True), rtol=1e-5, atol=1e-5)
    ct = np.random.default_rng(2).normal(size=N).astype(np.float32)
    s = events(5, M)
    grad = jax.jit(jax.grad(lambda w: jnp.vdot(ej.binary_densemv(w, s, transpose=True, backend='jax'), ct)))(w)
    np.testing.assert_allclose(grad, np.outer(s, ct), rtol=1e-6)


class TestCapacityBoundaries:
    """Each capacity exactly filled and one past it: a branch that loses its last gathered row, or
    a count test off by one, changes these results (counts strictly inside a capacity would not)."""

    def test_vector_events_at_and_past_each_capacity(self):
        for count in (0, 8, 9, 32, 33, 128, 129, M):  # capacities 8, 32, 128; then every row
            check(weights(), events(count, M, seed=count), True)

    @pytest.mark.parametrize('busiest', [1, 2])
    def test_the_busiest_column_picks_the_capacity(self, busiest):
        # The other columns hold fewer events; whichever column is the busiest, none loses one.
        rng = np.random.default_rng(busiest)
        for count in (8, 9, 32, 33, 128, 129, M):
            s = np.zeros((M, 3), bool)
            for c, k in enumerate((count // 2, count // 3, count // 4)):
                s[rng.choice(M, count if c == busiest else k, replace=False), c] = True
            check(weights(), s, True)

    def test_event_columns_all_and_none(self):
        w = np.random.default_rng(4).normal(size=(TestEventColumns.W_ROWS, TestEventColumns.W_COLS))
        w = w.astype(np.float32)
        for count in (0, 8, 9, TestEventColumns.W_COLS):  # capacity 8 (1024 / 128), then the product
            check(w, events(count, TestEventColumns.W_COLS, seed=count), False)
