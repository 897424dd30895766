"""The TPU kernels of the postsynaptic updates, run in Pallas's TPU interpreter on the cpu, against NumPy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.plasticity.pallas_tpu_csc import fits_smem
from eventjax.kernels.plasticity.pallas_tpu_post import event_tiles
from tests.kernels.pallas.tpu_interpret import BACKEND, tpu_kernel_operators, tpu_kernels_on_cpu


@pytest.fixture(autouse=True, scope='module')
def _tpu_kernels():
    with tpu_kernels_on_cpu():
        yield


def _bounded(v, w_min, w_max):
    v = v if w_min is None else np.where(v < w_min, w_min, v)  # NaN compares False: stays NaN
    return v if w_max is None else np.where(v > w_max, w_max, v)


def _dense_oracle(weight, trace, spikes, w_min, w_max):
    """Column ``j`` of an event: ``w[:, j] += trace``, then bounded."""
    w = np.asarray(weight, np.float64)
    hit = np.asarray(spikes, np.float64) > 0
    return np.where(hit[None, :], _bounded(w + np.asarray(trace, np.float64)[:, None], w_min, w_max), w)


def _csr_problem(rng, m, n, k):
    """CSR rows of 0 to ``k`` distinct columns, one row of ``n`` (every column), and its column view."""
    lengths = np.minimum(rng.integers(0, k + 1, m), n)
    lengths[m // 2] = n
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    indices = np.concatenate([np.sort(rng.choice(n, size, replace=False)) for size in lengths]).astype(np.int32)
    data = rng.normal(size=indices.shape[0]).astype(np.float32)
    return data, indices, indptr, ej.csr_column_view(indices, indptr, shape=(m, n))


def _csr_oracle(data, indices, indptr, trace, spikes, w_min, w_max):
    """Entry ``k`` of row ``i`` whose column fires: ``w[k] += trace[i]``, then bounded."""
    rows = np.repeat(np.arange(indptr.shape[0] - 1), np.diff(indptr))
    hit = np.asarray(spikes, np.float64)[indices] > 0
    w = np.asarray(data, np.float64)
    return np.where(hit, _bounded(w + np.asarray(trace, np.float64)[rows], w_min, w_max), w)


def _close(got, want, dtype=np.float32):
    assert got.dtype == dtype
    tol = 1e-6 if dtype == np.float32 else 2e-3
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=tol, atol=tol, equal_nan=True)


def test_the_postsynaptic_updates_have_a_tpu_kernel():
    assert {'dense_on_post', 'csr2csc_on_post'} <= set(tpu_kernel_operators())


def test_event_tiles_lists_each_tile_with_an_event_once():
    spikes = np.zeros(300, np.float32)
    spikes[[3, 5, 260, 299]] = [1.0, 0.5, 2.0, -1.0]  # -1 is no event
    count, tiles = event_tiles(jnp.asarray(spikes))
    assert int(count) == 2 and tiles[:2].tolist() == [0, 2]


@pytest.mark.parametrize('m, n, rate, bounds, float_events', [
    (37, 300, 0.05, (-0.5, 0.7), False),  # odd sizes, a partial last tile, two events in one tile
    (2100, 130, 1.0, (None, 0.3), True),  # two blocks of rows, every column an event
    (9, 128, 0.0, (None, None), False),  # no event
])
def test_dense_on_post_matches_numpy(m, n, rate, bounds, float_events):
    rng = np.random.default_rng(m + n)
    weight = rng.normal(size=(m, n)).astype(np.float32)
    weight[1, 2] = np.nan  # stays NaN, whether its column fires or not
    trace = rng.normal(size=m).astype(np.float32)
    spikes = rng.random(n) < rate
    events = np.where(spikes, rng.random(n) + 0.1, -rng.random(n)).astype(np.float32) if float_events else spikes
    got = jax.jit(lambda w, t, s: ej.dense_on_post(w, t, s, *bounds, backend=BACKEND))(weight, trace, events)
    _close(got, _dense_oracle(weight, trace, spikes, *bounds))


def test_dense_on_post_non_finite_trace_reaches_only_event_columns():
    weight = np.ones((10, 140), np.float32)
    trace = np.linspace(-1, 1, 10).astype(np.float32)
    trace[[2, 5]] = np.nan, np.inf
    spikes = np.zeros(140, bool)
    spikes[[0, 129]] = True
    got = ej.dense_on_post(weight, trace, spikes, backend=BACKEND)
    _close(got, _dense_oracle(weight, trace, spikes, None, None))


def test_dense_on_post_float16_takes_the_jax_kernel_and_vmap_grad_pass_through():
    rng = np.random.default_rng(1)
    weight = rng.normal(size=(6, 9)).astype(np.float32)
    trace = rng.normal(size=6).astype(np.float32)
    spikes = np.array([1, 0, 0, 1, 1, 0, 0, 0, 1], bool)
    half = ej.dense_on_post(weight.astype(np.float16), trace, spikes, backend=BACKEND)
    _close(half, _dense_oracle(weight.astype(np.float16), trace.astype(np.float16), spikes, None, None), np.float16)
    batch = jax.vmap(lambda w: ej.dense_on_post(w, trace, spikes, backend=BACKEND))(np.stack([weight, -weight]))
    _close(batch[1], _dense_oracle(-weight, trace, spikes, None, None))
    grad = jax.grad(lambda t: jnp.sum(ej.dense_on_post(weight, t, spikes, backend=BACKEND) ** 2))(trace)
    np.testing.assert_allclose(grad, 2 * (weight + trace[:, None])[:, spikes].sum(axis=1), rtol=1e-5)


@pytest.mark.parametrize('m, n, k, rate, bounds, float_events', [
    (37, 150, 13, 0.2, (-0.5, 0.7), False),  # rows sharing 128-wide weight pieces, bounds
    pytest.param(40, 20, 20, 1.0, (None, None), True, marks=pytest.mark.long),  # every column, one over a piece
    (5, 7, 2, 0.0, (None, None), False),  # no event
])
def test_csr2csc_on_post_matches_numpy(m, n, k, rate, bounds, float_events):
    rng = np.random.default_rng(m + n + k)
    data, indices, indptr, (rows, col_ptr, positions) = _csr_problem(rng, m, n, k)
    data[1] = np.nan
    trace = rng.normal(size=m).astype(np.float32)
    spikes = rng.random(n) < rate
    events = np.where(spikes, rng.random(n) + 0.1, 0.0).astype(np.float32) if float_events else spikes
    got = jax.jit(lambda w, s: ej.csr2csc_on_post(w, rows, col_ptr, positions, trace, s, *bounds, shape=(m, n),
                                                  backend=BACKEND))(data, events)
    _close(got, _csr_oracle(data, indices, indptr, trace, spikes, *bounds))


def test_csr2csc_on_post_drops_entries_out_of_range_under_jit():
    """Traced structure is not validated: rows and positions out of range are skipped, as on every backend."""
    rng = np.random.default_rng(5)
    m, n = 6, 9
    data, indices, indptr, (rows, col_ptr, positions) = _csr_problem(rng, m, n, 4)
    rows, positions = np.asarray(rows).copy(), np.asarray(positions).copy()
    rows[0], positions[1] = m + 3, -2
    trace = rng.normal(size=m).astype(np.float32)
    spikes = np.ones(n, bool)
    call = jax.jit(lambda r, p, b: ej.csr2csc_on_post(data, r, col_ptr, p, trace, spikes, shape=(m, n), backend=b),
                   static_argnums=2)
    np.testing.assert_allclose(call(rows, positions, BACKEND), call(rows, positions, 'jax'), rtol=1e-6)


def test_csr2csc_on_post_float16_and_too_large_take_the_jax_kernel():
    rng = np.random.default_rng(2)
    m, n = 6, 11
    data, indices, indptr, (rows, col_ptr, positions) = _csr_problem(rng, m, n, 5)
    trace = rng.normal(size=m).astype(np.float32)
    spikes = rng.random(n) < 0.5
    half = ej.csr2csc_on_post(data.astype(np.float16), rows, col_ptr, positions, trace, spikes, shape=(m, n),
                              backend=BACKEND)
    _close(half, _csr_oracle(data.astype(np.float16), indices, indptr, trace.astype(np.float16), spikes, None, None),
           np.float16)
    assert fits_smem(m=20_000, n=20_000, nnz=1_600_000, entries=1_600_000)
    assert not fits_smem(m=200_000, n=200_000, nnz=10, entries=10)  # trace and pointers past SMEM


def test_postsynaptic_updates_lower_to_mosaic_on_tpu_as_chosen():
    """``backend='pallas'`` lowers to one Mosaic call on a TPU, ``jax`` to none; the default is pallas for
    ``dense_on_post`` and jax for ``csr2csc_on_post`` (the faster on the chip)."""
    w, tr, s = jnp.ones((6, 5)), jnp.ones(6), jnp.ones(5, bool)
    rows, ptr, pos = ej.csr_column_view(jnp.tile(jnp.arange(5, dtype=jnp.int32), 6),
                                        jnp.arange(7, dtype=jnp.int32) * 5, shape=(6, 5))
    updates = (lambda b: ej.dense_on_post(w, tr, s, backend=b),
               lambda b: ej.csr2csc_on_post(w.reshape(-1), rows, ptr, pos, tr, s, shape=(6, 5), backend=b))

    def lowered(update, backend):
        return jax.jit(lambda: update(backend)).trace().lower(lowering_platforms=('tpu',)).as_text()

    for update, default_calls in zip(updates, (1, 0)):
        assert lowered(update, 'pallas').count('tpu_custom_call') == 1
        assert lowered(update, None).count('tpu_custom_call') == default_calls
        assert 'tpu_custom_call' not in lowered(update, 'jax')



def test_float64_weights_take_the_jax_kernel_under_x64():
    rng = np.random.default_rng(8)
    trace, spikes = rng.normal(size=7), rng.random(10) < 0.5
    with jax.enable_x64(True):
        dense = rng.normal(size=(7, 10))
        got = ej.dense_on_post(dense, trace, spikes, backend=BACKEND)
        _close(got, _dense_oracle(dense, trace, spikes, None, None), np.float64)
