"""The FCN family's TPU kernels, run in Pallas's TPU interpret mode against the jax kernels.

Interpret mode models the TPU's memory spaces, DMAs and semaphores on the
CPU, so these check the kernels' numbers without a chip; the lowering test
checks that they compile to Mosaic.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from eventjax.kernels.fcn.jax_impl import _product
from eventjax.kernels.fcn.pallas_tpu import binary_fcnmv_tpu_kernel, fcnmv_tpu_kernel


def _case(rng, m, n, k, *, transpose, events, homogeneous, matrix, dtype=np.float32):
    # Indices a little outside [0, n) too: those entries are dropped on every backend.
    indices = jnp.asarray(rng.integers(-2, n + 2, (m, k)), jnp.int32)
    weights = jnp.asarray(rng.normal(size=(1, 1) if homogeneous else (m, k)), dtype)
    rows = m if transpose else n
    shape = (rows, 3) if matrix else (rows,)
    x = jnp.asarray(rng.random(shape) < 0.3) if events else jnp.asarray(rng.normal(size=shape), dtype)
    return weights, indices, x


def _both(weights, indices, x, *, shape, transpose, events, dtype=jnp.float32):
    m, n = shape
    rows = (n if transpose else m,) + x.shape[1:]
    kg = binary_fcnmv_tpu_kernel if events else fcnmv_tpu_kernel
    call = kg(shape=shape, transpose=transpose, outs=(jax.ShapeDtypeStruct(rows, dtype),))
    got = call(weights, indices, x, interpret=True)
    want = _product(weights, indices, x, shape=shape, transpose=transpose, out_dtype=dtype, binary=events)
    return np.asarray(got, np.float32), np.asarray(want, np.float32)


@pytest.mark.parametrize('transpose', [True, False])
@pytest.mark.parametrize('events', [True, False])
@pytest.mark.parametrize('homogeneous', [True, False])
def test_vector_products_match_the_jax_kernel(transpose, events, homogeneous):
    rng = np.random.default_rng(0)
    m, n, k = 37, 300, 5  # odd sizes, n over two rows of 128 targets
    args = _case(rng, m, n, k, transpose=transpose, events=events, homogeneous=homogeneous, matrix=False)
    got, want = _both(*args, shape=(m, n), transpose=transpose, events=events)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('transpose', [True, False])
def test_matrix_products_run_column_by_column(transpose):
    rng = np.random.default_rng(1)
    m, n, k = 19, 23, 4
    args = _case(rng, m, n, k, transpose=transpose, events=True, homogeneous=False, matrix=True)
    got, want = _both(*args, shape=(m, n), transpose=transpose, events=True)
    assert got.shape == (n if transpose else m, 3)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_float16_accumulates_in_float32():
    rng = np.random.default_rng(2)
    m, n, k = 21, 40, 6
    args = _case(rng, m, n, k, transpose=True, events=False, homogeneous=False, matrix=False, dtype=np.float16)
    got, want = _both(*args, shape=(m, n), transpose=True, events=False, dtype=jnp.float16)
    np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize('transpose', [True, False])
def test_non_finite_values_reach_only_their_own_targets(transpose):
    """The MXU multiplies whole tiles; a NaN or inf must still land where the other backends put it."""
    rng = np.random.default_rng(3)
    m, n, k = 9, 140, 3
    weights, indices, x = _case(rng, m, n, k, transpose=transpose, events=False, homogeneous=False, matrix=False)
    weights = weights.at[2, 1].set(jnp.nan)
    x = x.at[4].set(jnp.inf)
    got, want = _both(weights, indices, x, shape=(m, n), transpose=transpose, events=False)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_events_ignore_the_nan_weights_of_rows_without_events():
    rng = np.random.default_rng(4)
    m, n, k = 8, 30, 3
    indices = jnp.asarray(rng.integers(0, n, (m, k)), jnp.int32)
    weights = jnp.ones((m, k)).at[0].set(jnp.nan)
    spikes = jnp.zeros(m, bool).at[3].set(True)
    got, want = _both(weights, indices, spikes, shape=(m, n), transpose=True, events=True)
    assert not np.isnan(got).any()
    np.testing.assert_allclose(got, want)


@pytest.mark.parametrize('transpose', [True, False])
def test_no_events_and_empty_shapes_give_zeros(transpose):
    m, n, k = 6, 5, 2
    indices = jnp.zeros((m, k), jnp.int32)
    x = jnp.zeros(m if transpose else n, bool)
    got, want = _both(jnp.ones((m, k)), indices, x, shape=(m, n), transpose=transpose, events=True)
    np.testing.assert_array_equal(got, np.zeros_like(want))
    got, want = _both(jnp.ones((m, 0)), jnp.zeros((m, 0), jnp.int32), x, shape=(m, n), transpose=transpose,
                      events=True)
    np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize('events, n, m', [(True, 5000, 300), (True, 40000, 300), (False, 1000, 300),
                                          (False, 9000, 300), (True, 700, 4200)])
def test_gather_over_tables_of_several_rows_and_several_blocks(events, n, m):
    """x spans several 128-wide table rows (unrolled, then looped past 64), and 4,200 rows span two programs
    of sideways blocks, the second cut short."""
    rng = np.random.default_rng(5)
    k = 7
    args = _case(rng, m, n, k, transpose=False, events=events, homogeneous=False, matrix=False)
    got, want = _both(*args, shape=(m, n), transpose=False, events=events)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('events, n, k', [(True, 70000, 21), (False, 2000, 17), (False, 1200, 33), (True, 20000, 40)])
def test_gather_groups_of_entries_sized_by_the_table(events, n, k):
    """Groups of 8 entries past 13 table rows (18 and 16 here), of 16 up to 13 (10), of 32 up to 6 (5); the
    last group short, down to one entry (17 = 8 + 8 + 1, 33 = 16 + 16 + 1)."""
    rng = np.random.default_rng(8)
    args = _case(rng, 150, n, k, transpose=False, events=events, homogeneous=False, matrix=False)
    got, want = _both(*args, shape=(150, n), transpose=False, events=events)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('k', [1, 200, 600])
def test_gather_rows_narrower_and_wider_than_a_vector(k):
    """Up to 512 entries a row run sideways (entries along sublanes); 600 run as stored."""
    rng = np.random.default_rng(6)
    m, n = 70, 333
    args = _case(rng, m, n, k, transpose=False, events=True, homogeneous=True, matrix=False)
    got, want = _both(*args, shape=(m, n), transpose=False, events=True)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('where', [[], pytest.param([31], marks=pytest.mark.long), [0, 31, 32, 63, 95, 99],
                                   pytest.param(list(range(100)), marks=pytest.mark.long)])
def test_scatter_finds_every_event_of_a_word(where):
    """Events are compacted from 32-bit words, the sign bit included, none to all of them."""
    rng = np.random.default_rng(7)
    m, n, k = 100, 50, 3
    indices = jnp.asarray(rng.integers(0, n, (m, k)), jnp.int32)
    weights = jnp.asarray(rng.normal(size=(m, k)), jnp.float32)
    spikes = jnp.zeros(m, bool).at[jnp.asarray(where, jnp.int32)].set(True)
    got, want = _both(weights, indices, spikes, shape=(m, n), transpose=True, events=True)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('events', [True, False])
def test_scatter_keeps_every_bit_of_float32_weights(events):
    """Each target gets one entry: the result is that entry's float32 coefficient exactly (the bfloat16 parts
    of a coefficient add up to it; two parts would lose its last 8 bits)."""
    rng = np.random.default_rng(8)
    m, n, k = 40, 200, 5
    indices = jnp.asarray(rng.permutation(n).reshape(m, k), jnp.int32)
    weights = jnp.asarray(rng.normal(size=(m, k)) * 2.0 ** rng.integers(-20, 20, (m, k)), jnp.float32)
    x = jnp.ones(m, bool) if events else jnp.asarray(1 + rng.random(m), jnp.float32)
    got, want = _both(weights, indices, x, shape=(m, n), transpose=True, events=events)
    np.testing.assert_array_equal(got, want)


def test_shared_weight_counts_the_events_reaching_each_target():
    """Many entries into one target: the shared weight times their count, within float32's rounding."""
    m, n, k = 300, 20, 3
    indices = jnp.full((m, k), 7, jnp.int32).at[:, 1].set(jnp.arange(m, dtype=jnp.int32) % n)
    spikes = jnp.arange(m) % 3 != 0
    got, want = _both(jnp.full((1, 1), 0.1, jnp.float32), indices, spikes, shape=(m, n), transpose=True,
                      events=True)
    np.testing.assert_allclose(got, want, rtol=1e-5)  # the jax kernel adds 0.1 one entry at a time
    assert got[7] == pytest.approx(0.1 * (2 * 200 + 10), rel=1e-6)


@pytest.mark.parametrize('weight', [np.nan, np.inf, -np.inf])
def test_shared_non_finite_weight_reaches_only_the_targets_of_events(weight):
    m, n, k = 10, 140, 2
    indices = jnp.asarray(np.arange(m * k).reshape(m, k) * 7, jnp.int32)
    spikes = jnp.zeros(m, bool).at[jnp.array([2, 9])].set(True)
    got, want = _both(jnp.full((1, 1), weight, jnp.float32), indices, spikes, shape=(m, n), transpose=True,
                      events=True)
    np.testing.assert_array_equal(got, want)
    assert np.count_nonzero(got) == 4


@pytest.mark.parametrize('events, homogeneous', [(True, False), (True, True), (False, False)])
def test_rows_beyond_smem_run_in_blocks(monkeypatch, events, homogeneous):
    """More rows than one program's SMEM holds run in blocks of rows (each fetching its rows from its first
    on), results added; the last block runs past the matrix, its rows without events and values 0."""
    from eventjax.kernels.common.pallas import tpu_rows

    monkeypatch.setattr(tpu_rows, '_FCN_BLOCK_ROWS', 64)
    rng = np.random.default_rng(7)
    m, n, k = 150, 77, 5
    args = _case(rng, m, n, k, transpose=True, events=events, homogeneous=homogeneous, matrix=False)
    if events:
        args = args[:2] + (args[2].at[m - 1].set(True).at[0].set(True),)
    got, want = _both(*args, shape=(m, n), transpose=True, events=events)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('events', [True, False])
@pytest.mark.parametrize('k, narrow', [(100, False), (127, False), (100, True), (129, False)])
def test_scatter_packs_rows_of_fewer_than_128_entries(monkeypatch, k, narrow, events):
    """Rows of fewer than 128 entries go through the MXU side by side, 16 to a product (``narrow``: the
    batches of a result past 131,072 targets, 4 rows of 128 lanes a product); 41 visited rows leave the last
    batch partly empty. Each target gets one entry, so the result is exact, and a NaN and an inf weight
    reach only their own targets."""
    from eventjax.kernels.common.pallas import tpu_rows

    if narrow:
        monkeypatch.setattr(tpu_rows, '_WIDE_PRODUCT_HI_ROWS', 0)
    rng = np.random.default_rng(9)
    m = 41
    n = m * k
    indices = jnp.asarray(rng.permutation(n).reshape(m, k), jnp.int32)
    weights = rng.normal(size=(m, k)) * 2.0 ** rng.integers(-20, 20, (m, k))
    weights[3, 5], weights[20, k - 1] = np.nan, np.inf
    x = jnp.ones(m, bool) if events else jnp.asarray(1 + rng.random(m), jnp.float32)
    got, want = _both(jnp.asarray(weights, jnp.float32), indices, x, shape=(m, n), transpose=True, events=events)
    np.testing.assert_array_equal(got, want)
    assert np.isnan(got).sum() == 1 and np.isinf(got).sum() == 1


def test_scatter_results_past_vmem_take_the_jax_kernel():
    """s @ W into more than 524,288 targets takes the jax kernel: past about 620,000 the result and a
    product's one-hot operands did not fit VMEM in libtpu's compile for a v5e (``tpu_compile`` compiles
    the scatters at 524,288)."""
    from eventjax.kernels.common.pallas.tpu_rows import fits_the_chip

    assert fits_the_chip(n=524_288, transpose=True)
    assert not fits_the_chip(n=524_289, transpose=True)
