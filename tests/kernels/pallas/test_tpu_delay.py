"""The delay family's TPU kernels, run in Pallas's TPU interpreter on the cpu, against the NumPy oracle."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.delay.pallas_tpu import fits_the_chip
from tests.kernels.delay import oracle
from tests.kernels.pallas.tpu_interpret import BACKEND, tpu_kernel_operators, tpu_kernels_on_cpu


@pytest.fixture(autouse=True, scope='module')
def _tpu_kernels():
    with tpu_kernels_on_cpu():
        yield


def _problem(seed, m, n, length, *, weighted, dtype, shared_w=False, shared_d=False, broken=False, rate=0.5):
    """Rows of 0 to 11 entries and one of 300 (three 128-wide pieces); ``broken``: columns and delays out of range."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 12, m)
    lengths[min(3, m - 1)] = 300
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    nnz = int(indptr[-1])
    indices = rng.integers(-2 if broken else 0, n + 2 if broken else n, nnz).astype(np.int32)
    delays = rng.integers(-1 if broken else 1, length + 1 if broken else length, 1 if shared_d else nnz)
    data = rng.normal(size=1 if shared_w else nnz).astype(dtype)
    if weighted:
        events = np.where(rng.random(m) < rate, rng.normal(size=m), 0).astype(np.float32)
    else:
        events = rng.random(m) < rate
    ring = rng.normal(size=(length, n)).astype(dtype)
    return ring, events, data, indices, indptr, delays.astype(np.int32)


def _close(got, want, dtype):
    tol = 2e-2 if dtype == np.float16 else 1e-5
    assert got.dtype == dtype
    np.testing.assert_allclose(np.asarray(got, np.float64), want, rtol=tol, atol=tol, equal_nan=True)


def test_both_delivery_forms_have_a_tpu_kernel():
    assert {'csr_delay_deliver', 'csr_delay_deliver_layout'} <= set(tpu_kernel_operators())


CASES = [  # (m, n, length, weighted, dtype, shared_w, shared_d, t)
    (23, 37, 5, False, np.float32, False, False, 3),
    (17, 5, 7, True, np.float16, True, True, 12),
    pytest.param(23, 37, 5, True, np.float32, False, True, -8, marks=pytest.mark.long),
    pytest.param(9, 130, 3, False, np.float16, True, False, 1, marks=pytest.mark.long),
]


@pytest.mark.parametrize('m, n, length, weighted, dtype, shared_w, shared_d, t', CASES)
def test_delivery_matches_the_oracle(m, n, length, weighted, dtype, shared_w, shared_d, t):
    """Odd sizes, float32/float16 rings, shared or per-synapse weights and delays, any ``t``, a 300-entry row."""
    ring, events, data, indices, indptr, delays = _problem(m + n, m, n, length, weighted=weighted, dtype=dtype,
                                                           shared_w=shared_w, shared_d=shared_d)
    got = jax.jit(lambda r, e: ej.csr_delay_deliver(r, e, data, indices, indptr, delays, t, shape=(m, n),
                                                    weighted=weighted, backend=BACKEND))(ring, events)
    _close(got, oracle.deliver(ring, events, data, indices, indptr, delays, t, weighted=weighted), dtype)


@pytest.mark.parametrize('weighted', [pytest.param(False, marks=pytest.mark.long), True])
def test_layout_and_traced_bad_structure_match_the_oracle(weighted):
    """The layout form, and traced columns and delays out of range (dropped, as the oracle drops them)."""
    m, n, length = 11, 29, 6
    ring, events, data, indices, indptr, delays = _problem(5, m, n, length, weighted=weighted, dtype=np.float32,
                                                           broken=True)
    want = oracle.deliver(ring, events, data, indices, indptr, delays, 4, weighted=weighted)
    got = jax.jit(lambda i, d: ej.csr_delay_deliver(ring, events, data, i, indptr, d, 4, shape=(m, n),
                                                    weighted=weighted, backend=BACKEND))(indices, delays)
    _close(got, want, np.float32)
    good = (indices >= 0) & (indices < n) & (delays >= 1) & (delays < length)
    lay = ej.CSRDelayLayout.build(data, np.where(good, indices, 0), indptr, np.where(good, delays, 1),
                                  shape=(m, n))
    want = oracle.deliver(ring, events, data, np.where(good, indices, 0), indptr, np.where(good, delays, 1), 4,
                          weighted=weighted)
    got = ej.csr_delay_deliver_layout(ring, events, lay, 4, weighted=weighted, backend=BACKEND)
    _close(got, want, np.float32)


def test_no_events_and_non_finite_inputs():
    """No event leaves the ring as it was; a NaN weight or a NaN event value takes the jax kernel, same result."""
    m, n, length = 7, 10, 4
    ring, events, data, indices, indptr, delays = _problem(9, m, n, length, weighted=True, dtype=np.float32)
    deliver = jax.jit(lambda e, w: ej.csr_delay_deliver(ring, e, w, indices, indptr, delays, 2, shape=(m, n),
                                                        weighted=True, backend=BACKEND))
    np.testing.assert_array_equal(deliver(np.zeros(m, np.float32), data), ring)
    events[3], data[0] = np.nan, np.inf
    want = oracle.deliver(ring, events, data, indices, indptr, delays, 2, weighted=True)
    _close(deliver(events, data), want, np.float32)


def test_vmap_and_grad_go_through_the_tpu_kernel():
    m, n, length = 9, 13, 5
    ring, events, data, indices, indptr, delays = _problem(2, m, n, length, weighted=False, dtype=np.float32)

    def deliver(e, w):
        return ej.csr_delay_deliver(ring, e, w, indices, indptr, delays, 1, shape=(m, n), backend=BACKEND)

    batch = np.stack([events, ~events])
    got = jax.jit(jax.vmap(deliver, in_axes=(0, None)))(batch, data)
    for k in range(2):
        _close(got[k], oracle.deliver(ring, batch[k], data, indices, indptr, delays, 1, weighted=False), np.float32)
    cot = np.linspace(-1, 1, ring.size, dtype=np.float32).reshape(ring.shape)
    grad = jax.grad(lambda w: jnp.sum(deliver(events, w) * cot))(jnp.asarray(data))
    want = jax.grad(lambda w: jnp.sum(ej.csr_delay_deliver(ring, events, w, indices, indptr, delays, 1,
                                                           shape=(m, n), backend='jax') * cot))(jnp.asarray(data))
    np.testing.assert_allclose(grad, want, rtol=1e-6, atol=1e-6)


def test_too_large_problems_take_the_jax_kernel():
    assert fits_the_chip(m=4000, nnz=400_000, length=20, n=4000)
    assert not fits_the_chip(m=4000, nnz=400_000, length=300, n=4000)  # ring past VMEM
    assert not fits_the_chip(m=100_000, nnz=10_000_000, length=2, n=100)  # work list past SMEM


@pytest.mark.parametrize('layout', [False, True])
def test_delivery_lowers_to_mosaic_on_tpu_when_asked_for(layout):
    """``backend='pallas'`` lowers to one Mosaic call on a TPU; the default there stays the jax kernel."""
    ring, events, data, indices, indptr, delays = _problem(1, 6, 5, 3, weighted=False, dtype=np.float32)
    lay = ej.CSRDelayLayout.build(data, indices, indptr, delays, shape=(6, 5))

    def lowered(backend):
        if layout:
            f = lambda r, e: ej.csr_delay_deliver_layout(r, e, lay, 1, backend=backend)
        else:
            f = lambda r, e: ej.csr_delay_deliver(r, e, data, indices, indptr, delays, 1, shape=(6, 5),
                                                  backend=backend)
        return jax.jit(f).trace(ring, events).lower(lowering_platforms=('tpu',)).as_text()

    assert lowered('pallas').count('tpu_custom_call') == 1
    assert 'tpu_custom_call' not in lowered(None)
