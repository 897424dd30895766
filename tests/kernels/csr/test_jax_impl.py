"""The fast ``jax`` CSR kernels on every layout and event capacity they switch between.

Every structure has the same shape and entry count, so one compiled kernel
serves all of them: the branch is chosen at run time, from the values.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.csr import jax_impl, reference
from eventjax.kernels.csr.jax_impl import entry_rows, pad_width
from tests.kernels.reference_semantics import csr_product, is_event

# The fast kernels start at jax_impl.SMALL connections; these tests lower that bound so small
# problems (cheap to draw and to compare) take every fast branch.
FAST_FROM = 4096


@pytest.fixture(autouse=True)
def _fast_kernels_from_4096(monkeypatch):
    monkeypatch.setattr(jax_impl, 'SMALL', FAST_FROM)


M, N, NNZ = 512, 384, 4096  # 8 entries per row on average; the padded width is 16
LONG = np.full(M, 7)
LONG[0], LONG[1:480] = 40, 8  # one row longer than the padded width
LENGTHS = {'uniform': np.full(M, 8), 'padded': np.tile([0, 16, 8, 8, 4, 12, 8, 8], M // 8), 'long': LONG}


def structure(kind, seed=0):
    rng = np.random.default_rng(seed)
    lengths = LENGTHS[kind]
    assert lengths.sum() == NNZ >= FAST_FROM and (kind == 'long') == (lengths.max() > pad_width(NNZ, M))
    indptr = np.r_[0, np.cumsum(lengths)].astype(np.int32)
    indices = rng.integers(0, N, NNZ).astype(np.int32)
    indices[::37] = -1  # dropped: never read, never wrapped
    indices[5::41] = N + 3
    data = rng.normal(size=NNZ).astype(np.float32)
    return data, indices, indptr


def events(count, rows, seed=1, matrix=False):
    rng = np.random.default_rng(seed)
    mask = np.zeros(rows, bool)
    mask[rng.choice(rows, count, replace=False)] = True
    if matrix:
        return np.stack([mask, np.roll(mask, 1), np.zeros(rows, bool)], axis=1)
    return mask


@functools.cache
def jitted(binary, matrix, transpose):
    name = ('binary_' if binary else '') + ('csrmm' if matrix else 'csrmv')
    fn = getattr(ej, name)
    return jax.jit(lambda d, i, p, x: fn(d, i, p, x, shape=(M, N), transpose=transpose, backend='jax'))


def check(binary, matrix, transpose, kind, x, data=None):
    d, indices, indptr = structure(kind)
    d = d if data is None else data
    got = jitted(binary, matrix, transpose)(d, indices, indptr, jnp.asarray(x))
    want = csr_product(d, indices, indptr, x, (M, N), transpose, binary)
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=1e-5, atol=1e-5)


class TestLayouts:
    @pytest.mark.parametrize('kind', ['uniform', 'padded', 'long'])
    @pytest.mark.parametrize('transpose', [False, True])
    @pytest.mark.parametrize('binary', [False, True])
    def test_every_layout_matches_numpy(self, kind, transpose, binary):
        rows = M if transpose else N
        x = events(rows // 3, rows) if binary else np.random.default_rng(2).normal(size=rows).astype(np.float32)
        check(binary, False, transpose, kind, x)

    def test_matrix_operands_match_numpy(self):
        for kind in ('uniform', 'long'):
            check(True, True, False, kind, events(5, N, matrix=True))
            check(False, True, True, kind, np.random.default_rng(3).normal(size=(M, 3)).astype(np.float32))


class TestEventRows:
    @pytest.mark.parametrize('kind', ['uniform', 'padded', 'long'])
    # Rows: capacity 16, 64, 256, then every row; the matrix has twice the events: 12 (of M * 3), 192, then all.
    @pytest.mark.parametrize('count', [0, 5, 40, 200, 400])
    def test_each_capacity_matches_numpy(self, kind, count):
        check(True, False, True, kind, events(count, M))
        check(True, True, True, kind, events(count, M, matrix=True))

    def test_nan_weights_of_rows_without_events_add_nothing(self):
        data, _, indptr = structure('padded')
        x = events(5, M)
        quiet = np.repeat(~x, np.diff(indptr))
        check(True, False, True, 'padded', x, data=np.where(quiet, np.nan, data).astype(np.float32))


class TestTransforms:
    def test_vmap_over_events_matches_numpy(self):
        data, indices, indptr = structure('padded')
        xs = np.stack([events(c, M) for c in (0, 5, 40, 400)])
        fn = jax.jit(jax.vmap(lambda s: ej.binary_csrmv(data, indices, indptr, s, shape=(M, N), transpose=True,
                                                        backend='jax')))
        got = fn(jnp.asarray(xs))
        for row, x in zip(got, xs):
            np.testing.assert_allclose(row, csr_product(data, indices, indptr, x, (M, N), True, True),
                                       rtol=1e-5, atol=1e-5)

    @pytest.mark.parametrize('kind', ['uniform', 'long'])
    def test_grads_match_numpy(self, kind):
        data, indices, indptr = structure(kind)
        x = events(5, M)
        ct = np.random.default_rng(4).normal(size=N).astype(np.float32)
        loss = lambda d: jnp.vdot(ej.binary_csrmv(d, indices, indptr, x, shape=(M, N), transpose=True,
                                                  backend='jax'), ct)
        # The cotangent of entry e of row i, column j: ct[j] when row i holds an event, else 0.
        rows = np.repeat(np.arange(M), np.diff(indptr))
        kept = (indices >= 0) & (indices < N)
        want = np.where(kept & is_event(x)[rows], ct[np.clip(indices, 0, N - 1)], 0)
        np.testing.assert_allclose(jax.jit(jax.grad(loss))(data), want, rtol=1e-6)
        v = np.random.default_rng(5).normal(size=N).astype(np.float32)
        grad_v = jax.jit(jax.grad(lambda v: ej.csrmv(data, indices, indptr, v, shape=(M, N), backend='jax').sum()))
        dense = np.zeros((M, N))
        np.add.at(dense, (rows[kept], indices[kept]), data[kept])
        np.testing.assert_allclose(grad_v(v), dense.sum(axis=0), rtol=1e-5, atol=1e-5)


def test_entry_rows_match_the_reference_binary_search():
    indptr = jnp.array([2, 2, 5, 5, 9, 9], jnp.int32)  # entries before the first row and after the last
    np.testing.assert_array_equal(entry_rows(indptr, 11), reference.entry_rows(indptr, 11))


def flat_events(count, seed=7):
    """``count`` events spread over an ``(M, 3)`` matrix (flattened row-major, as the kernel counts them)."""
    mask = np.zeros(M * 3, bool)
    mask[np.random.default_rng(seed).choice(M * 3, count, replace=False)] = True
    return mask.reshape(M, 3)


class TestCapacityBoundaries:
    """Each capacity exactly filled and one past it: a branch that loses its last gathered row, or
    a count test off by one, changes these results (counts strictly inside a capacity would not)."""

    @pytest.mark.parametrize('kind', ['uniform', 'padded'])
    def test_vector_events_at_and_past_each_capacity(self, kind):
        # Capacities of 512 rows: 16, 64, 256; past 256 every row; M is all of them.
        for count in (0, 16, 17, 64, 65, 256, 257, M):
            check(True, False, True, kind, events(count, M, seed=count))

    def test_matrix_events_at_and_past_each_capacity(self):
        # Over M * 3 flat events: capacities 12, 48, 192 (those up to M); past 192 every row.
        for count in (0, 12, 13, 48, 49, 192, 193, M * 3):
            check(True, True, True, 'padded', flat_events(count, seed=count))

    def test_an_event_row_longer_than_the_width_takes_the_general_layout(self):
        # Row 0 (40 entries) is longer than the padded width: at every capacity the general path runs.
        for count in (1, 16, 17, 64):
            x = events(count, M, seed=count)
            x[0] = True
            check(True, False, True, 'long', x)
            check(True, True, True, 'long', np.stack([x, np.zeros(M, bool), x], axis=1))

    @pytest.mark.parametrize('binary', [False, True])
    @pytest.mark.parametrize('transpose', [False, True])
    def test_a_row_one_past_the_padded_width_takes_the_general_layout(self, binary, transpose):
        # The 'padded' structure holds rows of exactly the width (16); here one row is 17 long.
        lengths = np.tile([0, 17, 8, 8, 4, 11, 8, 8], M // 8)
        assert lengths.sum() == NNZ and lengths.max() == pad_width(NNZ, M) + 1
        data, indices, _ = structure('padded')
        indptr = np.r_[0, np.cumsum(lengths)].astype(np.int32)
        rows = M if transpose else N
        if binary:
            xs = [events(c, rows, seed=c) for c in (16, 17, rows)]
            for x in xs:
                x[1] = True  # the long row (or a column it reaches)
        else:
            xs = [np.random.default_rng(2).normal(size=rows).astype(np.float32)]
        for x in xs:
            got = jitted(binary, False, transpose)(data, indices, indptr, jnp.asarray(x))
            np.testing.assert_allclose(np.asarray(got, np.float64),
                                       csr_product(data, indices, indptr, x, (M, N), transpose, binary),
                                       rtol=1e-5, atol=1e-5)
