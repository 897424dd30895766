"""The layout's own delivery (packed offsets ``delay * n + column``) gives what ``csr_delay_deliver`` gives.

Checked on every backend of the layout primitive against the dense NumPy
oracle and the raw operator: event modes, shared weights and delays, rings
longer than the layout needs, any ``t``, traced builds that drop bad
synapses, derivatives, ``vmap``, and the ring updated in place in a scan.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.delay import reference
from eventjax.kernels.delay.layout import _csr_delay_deliver_layout
from tests.kernels.delay import oracle

EVENTS = np.array([2.0, 0.0, -1.0, 0.5, 0.0, 3.0, 1.0], np.float32)


def _layout(data, indices, indptr, delays, shape=(7, 5)):
    return ej.CSRDelayLayout.build(data, indices, indptr, delays, shape=shape)


class TestPackedOffsets:
    def test_each_synapse_packs_its_delay_and_column_and_an_unkeepable_one_is_minus_one(self):
        indices = np.array([0, 4, -1, 5, 2, 3], np.int32)
        delays = np.array([1, 3, 2, 1, 0, 2 ** 31 // 5], np.int64)
        np.testing.assert_array_equal(reference.packed_offsets(indices, delays, 5, np),
                                      [5, 19, -1, -1, -1, -1])

    def test_the_layout_offsets_follow_its_sorted_columns_and_delays(self):
        _, data, indices, indptr, delays = oracle.problem(3, length=6)
        lay = _layout(data, indices, indptr, delays)
        assert lay.offsets.dtype == jnp.int32
        np.testing.assert_array_equal(lay.offsets, np.asarray(lay.delays) * 5 + np.asarray(lay.indices))
        by_hand = ej.CSRDelayLayout(lay.data, lay.indices, lay.indptr, lay.delays, shape=(7, 5), ring_length=6)
        np.testing.assert_array_equal(by_hand.offsets, lay.offsets)


class TestPackedOnly:
    prim = _csr_delay_deliver_layout.primitive

    def test_a_layout_without_columns_and_delays_delivers_what_the_full_one_does(self, backend):
        ring, data, indices, indptr, delays = oracle.problem(33, length=6)
        lay = _layout(data, indices, indptr, delays)
        lean = lay.packed_only()
        assert lean.indices is None and lean.delays is None and lean.offsets is lay.offsets
        assert repr(lean) == repr(lay)
        for events, weighted in ((EVENTS > 0, False), (EVENTS, True)):
            want = ej.csr_delay_deliver_layout(ring, events, lay, 4, weighted=weighted, backend=backend)
            deliver = jax.jit(ej.csr_delay_deliver_layout, static_argnames=('weighted', 'backend'))
            got = deliver(ring, events, lean, 4, weighted=weighted, backend=backend)
            np.testing.assert_array_equal(got, want)

    def test_a_layout_without_offsets_needs_columns_and_delays_to_pack(self):
        with pytest.raises(ValueError, match='pass the offsets'):
            ej.CSRDelayLayout(jnp.ones(2), None, jnp.array([0, 2]), None, shape=(1, 3), ring_length=2)


class TestLayoutDelivery:
    prim = _csr_delay_deliver_layout.primitive

    @pytest.mark.parametrize('homogeneous', [False, True])
    def test_every_event_mode_and_t_matches_numpy_and_the_raw_operator(self, backend, homogeneous):
        ring, data, indices, indptr, delays = oracle.problem(31, homogeneous=homogeneous, shared_delay=homogeneous)
        lay = _layout(data, indices, indptr, delays)
        for events, weighted in ((EVENTS > 0, False), (EVENTS, True), (EVENTS, False)):
            for t in (0, 3, -5, 2 ** 31 - 1):
                got = ej.csr_delay_deliver_layout(ring, events, lay, t, weighted=weighted, backend=backend)
                want = oracle.deliver(ring, events, data, indices, indptr, delays, t, weighted=weighted)
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f'{weighted} t={t}')
                raw = ej.csr_delay_deliver(ring, events, data, indices, indptr, delays, t, shape=(7, 5),
                                           weighted=weighted, backend=backend)
                np.testing.assert_allclose(got, raw, rtol=1e-5, atol=1e-5)

    def test_a_ring_longer_than_the_layout_needs_wraps_by_its_own_length(self, backend):
        ring, data, indices, indptr, delays = oracle.problem(32, length=4)
        lay = _layout(data, indices, indptr, delays)
        assert lay.ring_length <= 4
        long_ring = np.random.default_rng(0).standard_normal((9, 5)).astype(np.float32)
        for t in (5, 8, -1):
            got = ej.csr_delay_deliver_layout(long_ring, EVENTS, lay, t, backend=backend)
            np.testing.assert_allclose(got, oracle.deliver(long_ring, EVENTS, data, indices, indptr, delays, t,
                                                           weighted=False), rtol=1e-5, atol=1e-5)

    def test_a_layout_built_from_traced_arrays_drops_bad_synapses_as_the_raw_operator(self, backend):
        ring, data, indices, indptr, delays = oracle.problem(33, length=4)
        indices, delays = indices.copy(), delays.copy()
        indices[::4], delays[1::3], delays[2::5] = 7, 4, -2  # a column past n, a delay = L, a negative delay

        def f(d, i, dl, x):
            lay = ej.CSRDelayLayout.build(d, i, indptr, dl, shape=(7, 5))
            assert lay.ring_length is None
            return ej.csr_delay_deliver_layout(ring, x, lay, 2, weighted=True, backend=backend)

        got = jax.jit(f)(data, indices, delays, EVENTS)
        np.testing.assert_allclose(got, oracle.deliver(ring, EVENTS, data, indices, indptr, delays, 2, weighted=True),
                                   rtol=1e-5, atol=1e-5)

    def test_a_traced_build_from_int64_delays_keeps_them_for_the_ring_of_the_call(self, backend):
        ring, data, indices, indptr, delays = oracle.problem(34, length=6)
        with jax.enable_x64(True):
            wide = jnp.asarray(delays, jnp.int64)
            lay = jax.jit(lambda dl: ej.CSRDelayLayout.build(data, indices, indptr, dl, shape=(7, 5)))(wide)
            np.testing.assert_array_equal(np.sort(np.asarray(lay.delays)), np.sort(delays))
            got = ej.csr_delay_deliver_layout(ring, EVENTS, lay, 3, weighted=True, backend=backend)
        np.testing.assert_allclose(got, oracle.deliver(ring, EVENTS, data, indices, indptr, delays, 3, weighted=True),
                                   rtol=1e-5, atol=1e-5)

    def test_gradients_with_respect_to_weights_ring_and_events_are_the_raw_operators(self, backend):
        ring, data, indices, indptr, delays = oracle.problem(34)
        lay = _layout(data, indices, indptr, delays)
        ct = jnp.asarray(np.random.default_rng(1).standard_normal(ring.shape).astype(np.float32))

        def via_layout(w, r, x):
            lay_w = ej.CSRDelayLayout(w, lay.indices, lay.indptr, lay.delays, lay.offsets, shape=lay.shape,
                                      ring_length=lay.ring_length)
            return jnp.sum(ej.csr_delay_deliver_layout(r, x, lay_w, 1, weighted=True, backend=backend) * ct)

        def raw(w, r, x):
            return jnp.sum(ej.csr_delay_deliver(r, x, w, lay.indices, lay.indptr, lay.delays, 1, shape=(7, 5),
                                                weighted=True, backend=backend) * ct)

        for argnum in range(3):  # one at a time: the delivery is linear in each, not in weights and events together
            got = jax.jit(jax.grad(via_layout, argnums=argnum))(lay.data, jnp.asarray(ring), jnp.asarray(EVENTS))
            want = jax.grad(raw, argnums=argnum)(lay.data, jnp.asarray(ring), jnp.asarray(EVENTS))
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5, err_msg=f'argnum {argnum}')

    def test_vmap_delivers_per_batch_element(self, backend):
        ring, data, indices, indptr, delays = oracle.problem(35)
        lay = _layout(data, indices, indptr, delays)
        batch = np.stack([EVENTS, EVENTS[::-1], np.zeros(7, np.float32)])
        rings = np.stack([ring, 2 * ring, -ring])
        got = jax.vmap(lambda r, x: ej.csr_delay_deliver_layout(r, x, lay, -1, weighted=True, backend=backend))(
            rings, batch)
        for k in range(3):
            np.testing.assert_allclose(got[k], oracle.deliver(rings[k], batch[k], data, indices, indptr, delays, -1,
                                                              weighted=True), rtol=1e-5, atol=1e-5)

    def test_a_scan_of_deliveries_updates_its_carry_without_copying_the_ring(self, backend):
        ring, data, indices, indptr, delays = oracle.problem(36)
        W = ej.DelayedCSR.from_csr_arrays(data, indices, indptr, delays, shape=(7, 5))
        spikes = np.random.default_rng(36).random((6, 7)) < 0.5

        def run(r, s):
            def body(r, x):
                t, sp = x
                return W.deliver(r, sp, t, backend=backend), None
            return jax.lax.scan(body, r, (jnp.arange(6), s))[0]

        want = np.asarray(ring, np.float64)
        for t in range(6):
            want = oracle.deliver(want, spikes[t], data, indices, indptr, delays, t, weighted=False)
        np.testing.assert_allclose(jax.jit(run)(jnp.array(ring), spikes), want, rtol=1e-5, atol=1e-5)
        hlo = jax.jit(run, donate_argnums=0).lower(jnp.array(ring), spikes).compile().as_text()
        assert 'f32[4,5]{1,0} copy(' not in hlo


@pytest.mark.filterwarnings('ignore::DeprecationWarning')
@pytest.mark.parametrize('weighted', [False, True])
@pytest.mark.parametrize('homogeneous', [False, True])
@pytest.mark.parametrize('extra_rows', [0, 1000])
def test_the_numba_layout_kernels_prefetching_and_threaded_paths_match_numpy(weighted, homogeneous, extra_rows):
    """A ring past ``TARGETS_PREFETCH_MIN`` entries and a structure past ``PREFETCH_MIN_ENTRIES``: every hint runs.

    With 1000 more event rows a call delivers past ``PARTS_MIN_SYNAPSES`` and runs on numba's threads, each
    owning some ring slots; the ring is then bit for bit the serial kernel's (rows unsorted by delay here).
    """
    pytest.importorskip('numba')
    from eventjax.kernels.common.numba.events import PREFETCH_MIN_ENTRIES, ROWS_AHEAD
    from eventjax.kernels.delay import numba_impl

    k, length = 50, 6
    n = numba_impl.TARGETS_PREFETCH_MIN // length + 7
    m = PREFETCH_MIN_ENTRIES // k + 3
    rng = np.random.default_rng(5)
    indices = rng.integers(0, n, m * k, dtype=np.int32)
    delays = rng.integers(1, length, m * k, dtype=np.int32)
    offsets = reference.packed_offsets(indices, delays, n, np)
    offsets[::97] = -1  # dropped at build
    offsets[1::89] = indices[1::89]  # a delay of 0: dropped
    offsets[2::83] = length * n + 3  # past this ring: dropped
    data = np.array([0.5], np.float32) if homogeneous else rng.standard_normal(m * k, dtype=np.float32)
    indptr = np.arange(0, m * k + 1, k, dtype=np.int32)
    rows = [0, 1, 2 * ROWS_AHEAD + 1, 777, m // 2, m - 2, m - 1]
    rows = sorted(set(rows) | set(rng.choice(m, extra_rows, replace=False).tolist()))
    assert (len(rows) * k >= numba_impl.PARTS_MIN_SYNAPSES) == (extra_rows > 0)
    events = np.zeros(m, np.float32)
    events[rows] = rng.standard_normal(len(rows)).astype(np.float32) if weighted else 1.0
    ring = np.zeros((length, n), np.float32)
    out = ring.copy()
    kernel = numba_impl.csr_delay_deliver_layout_kernel(shape=(m, n), weighted=weighted)
    assert kernel is (numba_impl._layout_weighted_parts if weighted else numba_impl._layout_binary_parts)
    kernel(ring, events, data, offsets, indptr, np.array([-2], np.int32), out, np.zeros(8, np.uint8))
    serial = ring.copy()
    (numba_impl._layout_weighted if weighted else numba_impl._layout_binary)(
        ring, events, data, offsets, indptr, np.array([-2], np.int32), serial, np.zeros(8, np.uint8))
    np.testing.assert_array_equal(out, serial)
    want = np.zeros((length, n))
    for i in rows:
        lo, hi = indptr[i], indptr[i + 1]
        o = offsets[lo:hi].astype(np.int64)
        w = np.broadcast_to(data, (m * k,))[lo:hi].astype(np.float64) * (events[i] if weighted else 1.0)
        ok = (o >= n) & (o < length * n)
        np.add.at(want, ((-2 + o[ok] // n) % length, o[ok] % n), w[ok])
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)
