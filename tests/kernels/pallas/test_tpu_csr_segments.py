"""CSR W @ s over rows of unequal length on the TPU (running sums per row), in Pallas's TPU interpret mode
against a float64 NumPy product."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.csr import pallas_tpu_segments
from eventjax.kernels.csr.pallas_tpu_segments import segment_gather
from tests.kernels.pallas.tpu_interpret import BACKEND, tpu_kernels_on_cpu


def _numpy(data, indices, indptr, x, n, events):
    data, indices, indptr, x = (np.asarray(a) for a in (data, indices, indptr, x))
    m = indptr.size - 1
    w = np.broadcast_to(data.astype(np.float64), indices.shape)
    y = np.zeros((m,) + x.shape[1:])
    for r in range(m):
        for p in range(max(indptr[r], 0), min(indptr[r + 1], indices.size)):
            t = indices[p]
            if 0 <= t < n:
                y[r] += w[p] * ((x[t] > 0) if events else x[t])
    return y


def _gather(data, indices, indptr, x, n, events):
    return np.asarray(segment_gather(jnp.asarray(data), jnp.asarray(indices), jnp.asarray(indptr), jnp.asarray(x),
                                     n=n, events=events, out_dtype=jnp.float32, interpret=True))


def _rows(rng, lengths, n, *, homogeneous):
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    indices = rng.integers(-2, n + 2, indptr[-1]).astype(np.int32)
    data = rng.normal(size=1 if homogeneous else indptr[-1]).astype(np.float32)
    return data, indices, indptr


@pytest.mark.parametrize('events', [True, False])
@pytest.mark.parametrize('homogeneous', [True, False])
@pytest.mark.parametrize('extra', [0, 77])  # whole layout rows read in place (a last block past the end), or padded
def test_running_sums_carry_across_blocks(monkeypatch, events, homogeneous, extra):
    """Blocks of 8 layout rows: rows of up to 300 entries cross lanes, layout rows and blocks, and empty rows
    sit anywhere; the last block reads past the entries."""
    monkeypatch.setattr(pallas_tpu_segments, '_BLOCK', 8)
    rng = np.random.default_rng(extra + 2 * events + homogeneous)
    n = 500
    lengths = rng.integers(0, 40, 120)
    lengths[[5, 60]] = 300, 0
    layout_rows = 8 * (lengths.sum() // 1024 + 1) + 3  # a last block of 3 layout rows (of 4 when padded)
    lengths[-1] += 128 * layout_rows - lengths.sum() + extra
    data, indices, indptr = _rows(rng, lengths, n, homogeneous=homogeneous)
    x = rng.random(n) < 0.3 if events else rng.normal(size=n).astype(np.float32)
    np.testing.assert_allclose(_gather(data, indices, indptr, x, n, events), _numpy(data, indices, indptr, x, n,
                                                                                      events), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize('read_whole', [True, False])
def test_a_row_s_sum_is_its_own_terms_whatever_its_neighbours_hold(monkeypatch, read_whole):
    """Restarts are selects: a row of tiny terms after rows of 1e30, NaN and inf keeps its own sum (a
    difference of running totals would lose it), and NaN and inf stay in their rows, whether the sums are
    read as whole layout rows and a lane picked, or one value a row (past _ROWS_READ_WHOLE rows)."""
    if not read_whole:
        monkeypatch.setattr(pallas_tpu_segments, '_ROWS_READ_WHOLE', 0)
    data = np.array([1e30, 1e30, 3e-3, 4e-3, np.nan, 1.0, np.inf, 2.0, 5e-3], np.float32)
    indices = np.zeros(9, np.int32)
    indptr = np.array([0, 2, 4, 5, 6, 7, 8, 9], np.int32)
    got = _gather(data, indices, indptr, np.array([1.0], np.float32), 1, False)
    want = np.array([2e30, 7e-3, np.nan, 1.0, np.inf, 2.0, 5e-3], np.float32)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-6)


def test_entries_outside_every_row_and_empty_rows_add_nothing():
    """Entries before the first row's start and after the last row's end belong to no row."""
    data = np.arange(1, 11, dtype=np.float32)
    indices = np.array([0, 1, 2, 0, 1, 2, 0, 1, 2, 0], np.int32)
    indptr = np.array([2, 2, 5, 5, 7, 7], np.int32)
    x = np.array([True, True, False])
    got = _gather(data, indices, indptr, x, 3, True)
    np.testing.assert_array_equal(got, [0, 4 + 5, 0, 7, 0])
    np.testing.assert_array_equal(got, _numpy(data, indices, indptr, x, 3, True))


@pytest.mark.parametrize('events', [True, pytest.param(False, marks=pytest.mark.long)])
def test_the_csr_product_under_jit_vmap_and_grad(events):
    """``binary_csrmv`` / ``csrmv`` W @ s with rows of unequal length through the primitive (the TPU kernel in
    the interpreter): vmap over x, a matrix x (``csrmm``) and the gradient by the weights."""
    rng = np.random.default_rng(3)
    m, n = 37, 150
    data, indices, indptr = _rows(rng, rng.integers(0, 9, m), n, homogeneous=False)
    op = ej.binary_csrmv if events else ej.csrmv
    xs = rng.random((3, n)) < 0.3 if events else rng.normal(size=(3, n)).astype(np.float32)

    def product(w, x, backend):
        return op(w, indices, indptr, x, shape=(m, n), transpose=False, backend=backend, validate=False)

    mm = ej.binary_csrmm if events else ej.csrmm
    with tpu_kernels_on_cpu():
        got = jax.jit(jax.vmap(lambda x: product(data, x, BACKEND)))(xs)
        mat = jax.jit(lambda x: mm(data, indices, indptr, x, shape=(m, n), transpose=False, backend=BACKEND,
                                   validate=False))(xs.T)
        grad = jax.grad(lambda w: product(w, xs[0], BACKEND).sum())(data)
    want = np.stack([_numpy(data, indices, indptr, x, n, events) for x in xs])
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(mat, want.T, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad, jax.grad(lambda w: product(w, xs[0], 'jax').sum())(data), rtol=1e-6)


def test_many_rows_starting_in_one_block_and_runs_of_empty_rows(monkeypatch):
    """The rows' starts are marked 128 at a time: 700 rows of 0-2 entries start in one block, 300 empty rows
    share one start, and the rows after them start in the blocks beyond."""
    monkeypatch.setattr(pallas_tpu_segments, '_BLOCK', 8)
    rng = np.random.default_rng(9)
    n = 50
    lengths = np.r_[rng.integers(0, 3, 700), np.zeros(300, int), rng.integers(100, 400, 9)]
    data, indices, indptr = _rows(rng, lengths, n, homogeneous=False)
    x = rng.normal(size=n).astype(np.float32)
    np.testing.assert_allclose(_gather(data, indices, indptr, x, n, False), _numpy(data, indices, indptr, x, n,
                                                                                     False), rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize('n', [0, 1, 127, 128, 129, 1000])
def test_the_blocks_bounds_search_equals_numpy_s_searchsorted(monkeypatch, n):
    # The kernel's blocks find their rows through search_sorted: rows of 128 compared whole, then one row
    # read (past the comparisons it makes at once, XLA's search: both checked); sorted arrays with runs of
    # equal values, the fill's value itself, queries before and past all.
    from eventjax.kernels.common.pallas import tpu_pieces

    rng = np.random.default_rng(n)
    top = np.iinfo(np.int32).max
    for a in (np.sort(rng.integers(-50, 400, n)), np.full(n, 7), np.sort(rng.integers(0, 3, n))):
        a = a.astype(np.int32)
        if n:
            a[-1] = top if n % 2 else a[-1]
        q = np.concatenate([rng.integers(-60, 420, 64), [np.iinfo(np.int32).min, 7, top]]).astype(np.int32)
        for compares in (1 << 25, 0):
            monkeypatch.setattr(tpu_pieces, '_SEARCH_COMPARES', compares)
            got = np.asarray(tpu_pieces.search_sorted(jnp.asarray(a), jnp.asarray(q)))
            np.testing.assert_array_equal(got, np.searchsorted(a, q, side='left'))
            assert got.dtype == np.int32
