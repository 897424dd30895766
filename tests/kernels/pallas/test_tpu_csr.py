"""The CSR family's TPU kernels, run in Pallas's TPU interpret mode against the jax kernels."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from eventjax.kernels.csr.jax_impl import _product
from eventjax.kernels.csr.pallas_tpu import binary_csrmv_tpu_kernel, csrmv_tpu_kernel


def _case(rng, m, n, lengths, *, transpose, events, homogeneous, matrix=False):
    indptr = jnp.asarray(np.concatenate([[0], np.cumsum(lengths)]), jnp.int32)
    nnz = int(indptr[-1])
    indices = jnp.asarray(rng.integers(-2, n + 2, nnz), jnp.int32)
    data = jnp.asarray(rng.normal(size=1 if homogeneous else nnz), jnp.float32)
    rows = m if transpose else n
    shape = (rows, 2) if matrix else (rows,)
    x = jnp.asarray(rng.random(shape) < 0.3) if events else jnp.asarray(rng.normal(size=shape), jnp.float32)
    return data, indices, indptr, x


def _both(data, indices, indptr, x, *, shape, transpose, events):
    m, n = shape
    rows = (n if transpose else m,) + x.shape[1:]
    kg = binary_csrmv_tpu_kernel if events else csrmv_tpu_kernel
    call = kg(shape=shape, transpose=transpose, outs=(jax.ShapeDtypeStruct(rows, jnp.float32),))
    got = call(data, indices, indptr, x, interpret=True)
    want = _product(data, indices, indptr, x, shape=shape, transpose=transpose, out_dtype=jnp.float32,
                    binary=events)
    return np.asarray(got), np.asarray(want)


@pytest.mark.parametrize('transpose', [True, False])
@pytest.mark.parametrize('events', [True, False])
@pytest.mark.parametrize('homogeneous', [True, False])
def test_rows_of_any_length_match_the_jax_kernel(transpose, events, homogeneous):
    """Rows of 0 to 129 entries start anywhere in the 128-wide layout."""
    rng = np.random.default_rng(0)
    m, n = 23, 290
    lengths = rng.integers(0, 12, m)
    lengths[3], lengths[7] = 129, 128
    args = _case(rng, m, n, lengths, transpose=transpose, events=events, homogeneous=homogeneous)
    got, want = _both(*args, shape=(m, n), transpose=transpose, events=events)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('transpose', [True, False])
def test_equal_rows_and_long_rows(transpose):
    """Equal row lengths take the FCN gather when not transposed; a row over 129 entries is cut in pieces
    when transposed and takes the jax kernel when not."""
    rng = np.random.default_rng(1)
    m, n = 12, 40
    for lengths in (np.full(m, 5), np.r_[np.full(m - 1, 2), 200]):
        args = _case(rng, m, n, lengths, transpose=transpose, events=True, homogeneous=False, matrix=True)
        got, want = _both(*args, shape=(m, n), transpose=transpose, events=True)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('transpose', [True, False])
@pytest.mark.parametrize('events, homogeneous', [(True, False), (False, True)])
def test_unequal_rows_with_as_many_entries_as_equal_ones(transpose, events, homogeneous):
    """60 entries over 12 rows of unequal length (5 a row on average): W @ s runs the gather on the (12, 5)
    layout, finds the lengths unequal and answers with the scatter, which reads the same layout; s @ W
    finds them unequal and scatters the rows as pieces."""
    rng = np.random.default_rng(3)
    m, n = 12, 40
    lengths = np.r_[0, 10, 5, 5, 1, 9, 5, 5, 5, 5, 7, 3]
    args = _case(rng, m, n, lengths, transpose=transpose, events=events, homogeneous=homogeneous)
    got, want = _both(*args, shape=(m, n), transpose=transpose, events=events)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('events', [True, False])
@pytest.mark.parametrize('k', [100, 127])
def test_equal_rows_are_packed_side_by_side(k, events):
    """Rows of k < 128 entries each, starting at many offsets of their 128-wide layout rows, go through
    the MXU k lanes apart; every target gets one entry, so the result is exact, and a NaN and an inf
    weight reach only their own targets."""
    rng = np.random.default_rng(10)
    m = 37
    n = m * k
    indptr = jnp.arange(0, n + 1, k, dtype=jnp.int32)
    indices = jnp.asarray(rng.permutation(n), jnp.int32)
    data = jnp.asarray(rng.normal(size=n) * 2.0 ** rng.integers(-20, 20, n), jnp.float32)
    data = data.at[7].set(jnp.nan).at[n - 1].set(jnp.inf)
    x = jnp.ones(m, bool) if events else jnp.asarray(1 + rng.random(m), jnp.float32)
    assert len(set(np.asarray(indptr) % 128)) > 25
    got, want = _both(data, indices, indptr, x, shape=(m, n), transpose=True, events=events)
    np.testing.assert_array_equal(got, want)
    assert np.isnan(got).sum() == 1 and np.isinf(got).sum() == 1


@pytest.mark.parametrize('events', [True, False])
@pytest.mark.parametrize('homogeneous', [True, False])
def test_long_rows_are_cut_into_pieces(events, homogeneous):
    """Rows of 0 to 700 entries (empty rows, exactly 128 and 256, one past) scatter in pieces of 128."""
    rng = np.random.default_rng(2)
    m, n = 11, 333
    lengths = np.array([700, 0, 3, 128, 0, 256, 257, 1, 0, 130, 5])
    args = _case(rng, m, n, lengths, transpose=True, events=events, homogeneous=homogeneous, matrix=not events)
    if events:
        args = args[:3] + (jnp.ones(m, bool).at[1].set(False).at[7].set(False),)
    got, want = _both(*args, shape=(m, n), transpose=True, events=events)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize('events', [True, False])
def test_rows_starting_at_every_lane_of_the_layout(events):
    """Rows of 97 to 128 entries start at every offset in their 128-wide layout rows, each taking one
    128-lane window; every target gets one entry, so the result is exact."""
    rng = np.random.default_rng(3)
    m = 37
    lengths = np.r_[rng.integers(97, 129, m - 1), 128]
    n = int(lengths.sum())
    indptr = jnp.asarray(np.concatenate([[0], np.cumsum(lengths)]), jnp.int32)
    indices = jnp.asarray(rng.permutation(n), jnp.int32)
    data = jnp.asarray(rng.normal(size=n) * 2.0 ** rng.integers(-20, 20, n), jnp.float32)
    x = jnp.ones(m, bool) if events else jnp.asarray(rng.normal(size=m), jnp.float32)
    assert len(set(np.asarray(indptr) % 128)) > 25
    got, want = _both(data, indices, indptr, x, shape=(m, n), transpose=True, events=events)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize('transpose', [True, False])
def test_no_events_non_finite_values_and_unequal_rows(transpose):
    """No events give zeros; NaN and inf values reach only their own targets; unequal rows (W @ s) take
    the gather-and-scatter product."""
    rng = np.random.default_rng(4)
    m, n = 9, 140
    lengths = np.array([3, 0, 5, 1, 4, 4, 2, 6, 3])
    data, indices, indptr, _ = _case(rng, m, n, lengths, transpose=transpose, events=False, homogeneous=False)
    rows = m if transpose else n
    got, want = _both(data, indices, indptr, jnp.zeros(rows, bool), shape=(m, n), transpose=transpose,
                      events=True)
    np.testing.assert_array_equal(got, np.zeros_like(want))
    x = jnp.asarray(rng.normal(size=rows), jnp.float32).at[2].set(jnp.inf).at[4].set(jnp.nan)
    got, want = _both(data.at[5].set(jnp.nan), indices, indptr, x, shape=(m, n), transpose=transpose, events=False)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('events', [True, pytest.param(False, marks=pytest.mark.long)])
@pytest.mark.parametrize('rows', ['unequal', pytest.param('pieces', marks=pytest.mark.long),
                                  pytest.param('equal', marks=pytest.mark.long)])
def test_rows_beyond_smem_run_in_blocks(monkeypatch, events, rows):
    """More rows (or pieces of rows, or equal rows packed side by side) than one program's SMEM holds run in
    blocks of rows, results added (the block logic is shared: make test-long runs the other two forms)."""
    from eventjax.kernels.common.pallas import tpu_rows

    monkeypatch.setattr(tpu_rows, '_CSR_BLOCK_ROWS', 64)
    rng = np.random.default_rng(5)
    m, n = 150, 77
    lengths = {'unequal': rng.integers(0, 9, m), 'pieces': np.r_[rng.integers(0, 9, m - 2), 300, 5],
               'equal': np.full(m, 7)}[rows]
    args = _case(rng, m, n, lengths, transpose=True, events=events, homogeneous=False)
    got, want = _both(*args, shape=(m, n), transpose=True, events=events)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('events, homogeneous', [(True, False), (True, True), (False, False)])
@pytest.mark.parametrize('nnz', [128, pytest.param(256, marks=pytest.mark.long),
                                 pytest.param(384, marks=pytest.mark.long), 385])
def test_entries_in_whole_layout_rows_are_read_in_place(nnz, events, homogeneous):
    """Entries filling whole 128-wide rows are laid out without padding, so the windows of the rows in
    the layout's last row (one of 5 entries ending there, one of 120 straddling into it, empty rows at
    the end) are fetched with the row before; 128 entries are padded to the two rows a window needs."""
    rng = np.random.default_rng(6)
    lengths = np.r_[rng.multinomial(nnz - 125, np.full(6, 1 / 6)), 120, 5, 0, 0]
    m, n = lengths.size, 150
    args = _case(rng, m, n, lengths, transpose=True, events=events, homogeneous=homogeneous)
    if events:
        args = args[:3] + (jnp.ones(m, bool).at[2].set(False),)
    got, want = _both(*args, shape=(m, n), transpose=True, events=events)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
