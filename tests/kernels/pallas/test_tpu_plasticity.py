"""The TPU kernels of the presynaptic updates, run in Pallas's TPU interpreter on the cpu, against NumPy."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.plasticity.pallas_tpu import fits_the_chip
from tests.kernels.pallas.tpu_interpret import BACKEND, tpu_kernel_operators, tpu_kernels_on_cpu


@pytest.fixture(autouse=True, scope='module')
def _tpu_kernels():
    with tpu_kernels_on_cpu():
        yield


def _oracle(weight, targets, spikes, trace, w_min, w_max):
    """Row ``i`` of an event: ``w[i, c] += trace[targets[i, c]]`` where the target is in range, then bounded."""
    out = np.asarray(weight, np.float64).copy()
    n = trace.shape[0]
    for i in np.flatnonzero(spikes > 0):
        for c, j in enumerate(targets[i]):
            if 0 <= j < n:
                v = out[i, c] + trace[j]
                v = v if w_min is None or not v < w_min else w_min
                out[i, c] = v if w_max is None or not v > w_max else w_max
    return out


def _close(got, want):
    assert got.dtype == jnp.float32
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=1e-6, atol=1e-6, equal_nan=True)


def test_the_presynaptic_updates_have_a_tpu_kernel():
    assert {'dense_on_pre', 'fcn_on_pre', 'csr_on_pre'} <= set(tpu_kernel_operators())


@pytest.mark.parametrize('m, n, k, bounds, rate', [
    (21, 150, 13, (-0.5, 0.7), 0.5),
    pytest.param(9, 300, 130, (None, None), 1.0, marks=pytest.mark.long),
    pytest.param(17, 3, 1, (None, 0.2), 0.0, marks=pytest.mark.long)])
def test_updates_match_numpy(m, n, k, bounds, rate):
    """Odd sizes, rows past 128 entries, bounds, all or no events, targets out of range (traced: dropped)."""
    rng = np.random.default_rng(m + n + k)
    spikes = rng.random(m) < rate
    trace = rng.normal(size=n).astype(np.float32)
    dense = rng.normal(size=(m, n)).astype(np.float32)
    dense[2, 1] = np.nan  # stays NaN, whether its row fires or not
    got = jax.jit(lambda w, s: ej.dense_on_pre(w, s, trace, *bounds, backend=BACKEND))(dense, spikes)
    _close(got, _oracle(dense, np.tile(np.arange(n), (m, 1)), spikes, trace, *bounds))
    weight = rng.normal(size=(m, k)).astype(np.float32)
    targets = rng.integers(-1, n + 1, (m, k)).astype(np.int32)
    got = jax.jit(lambda w, i, s: ej.fcn_on_pre(w, i, s, trace, *bounds, shape=(m, n), backend=BACKEND))(
        weight, targets, spikes.astype(np.float32))
    _close(got, _oracle(weight, targets, spikes, trace, *bounds))
    # The same connections as CSR, one row past two pieces and rows sharing pieces.
    lengths = rng.integers(0, k + 1, m)
    lengths[1] = 2 * k + 50
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    flat = rng.integers(-1, n + 1, int(indptr[-1])).astype(np.int32)
    data = rng.normal(size=flat.shape[0]).astype(np.float32)
    got = jax.jit(lambda w, i, p: ej.csr_on_pre(w, i, p, spikes, trace, *bounds, shape=(m, n), backend=BACKEND,
                                                max_row_length=int(lengths.max())))(data, flat, indptr)
    want = np.concatenate([_oracle(data[None, a:b], flat[None, a:b], spikes[i:i + 1], trace, *bounds)[0]
                           for i, (a, b) in enumerate(zip(indptr[:-1], indptr[1:]))])
    _close(got, want)


def test_non_finite_trace_and_float16_weights_take_the_jax_kernel():
    rng = np.random.default_rng(3)
    m, n, k = 6, 40, 5
    spikes = rng.random(m) < 0.6
    trace = rng.normal(size=n).astype(np.float32)
    trace[[0, 7]] = np.nan, np.inf
    weight = rng.normal(size=(m, k)).astype(np.float32)
    targets = rng.integers(0, n, (m, k)).astype(np.int32)
    got = ej.fcn_on_pre(weight, targets, spikes, trace, shape=(m, n), backend=BACKEND)
    _close(got, _oracle(weight, targets, spikes, trace, None, None))
    half = ej.fcn_on_pre(weight.astype(np.float16), targets, spikes, trace, shape=(m, n), backend=BACKEND)
    assert half.dtype == np.float16
    np.testing.assert_allclose(np.asarray(half, np.float64), _oracle(weight.astype(np.float16), targets, spikes,
                                                                     trace.astype(np.float16), None, None),
                               rtol=2e-3, atol=2e-3)


def test_vmap_and_grad_go_through_the_tpu_kernel():
    rng = np.random.default_rng(4)
    m, n = 5, 7
    weight = rng.normal(size=(m, n)).astype(np.float32)
    spikes = np.array([True, False, True, True, False])
    trace = rng.normal(size=n).astype(np.float32)
    batch = jax.vmap(lambda w: ej.dense_on_pre(w, spikes, trace, backend=BACKEND))(np.stack([weight, -weight]))
    _close(batch[1], _oracle(-weight, np.tile(np.arange(n), (m, 1)), spikes, trace, None, None))
    grad = jax.grad(lambda tr: jnp.sum(ej.dense_on_pre(weight, spikes, tr, backend=BACKEND) ** 2))(trace)
    np.testing.assert_allclose(grad, 2 * (weight + trace)[spikes].sum(axis=0), rtol=1e-5)


def test_too_large_problems_take_the_jax_kernel():
    assert fits_the_chip(m=4000, n=4000, k=100, gather=True)
    assert not fits_the_chip(m=4000, n=10 ** 6, k=100, gather=True)  # trace past VMEM
    assert not fits_the_chip(m=10 ** 6, n=100, k=100, gather=False)  # row ids past SMEM


def test_updates_lower_to_mosaic_on_tpu_by_default():
    """``backend='pallas'`` and the default both lower to one Mosaic call on a TPU; ``jax`` to none."""
    w, s, tr, idx = jnp.ones((6, 5)), jnp.ones(6, bool), jnp.ones(5), jnp.zeros((6, 3), jnp.int32)
    ptr = jnp.arange(7, dtype=jnp.int32) * 3
    updates = (lambda b: ej.dense_on_pre(w, s, tr, backend=b),
               lambda b: ej.fcn_on_pre(w[:, :3], idx, s, tr, shape=(6, 5), backend=b),
               lambda b: ej.csr_on_pre(w[:, :3].reshape(-1), idx.reshape(-1), ptr, s, tr, shape=(6, 5), backend=b))

    def lowered(update, backend):
        return jax.jit(lambda: update(backend)).trace().lower(lowering_platforms=('tpu',)).as_text()

    for update in updates:
        assert lowered(update, 'pallas').count('tpu_custom_call') == 1
        assert lowered(update, None).count('tpu_custom_call') == 1
        assert 'tpu_custom_call' not in lowered(update, 'jax')
