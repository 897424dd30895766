"""What brainevent 0.3.0's own delay tests check, held by eventjax where the Semantics page does not rule otherwise.

Written from the behaviours those tests check (collisions, wrap-around of
``t``, event dtypes, the graded/binary flag, validation, units, dtypes of
``data``, x64 steps, inactive rows with non-finite weights, exact zero
cotangents, closed-over delays under ``jit``, the delay-sorted layout);
where the Semantics page rules otherwise (binary events are ``> 0``,
traced out-of-range delays are dropped, every backend takes every float
dtype) the eventjax rule is what is checked.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.delay.csr_delay_deliver import _csr_delay_deliver
from tests.extras import UNITS_EXTRA
from tests.kernels.delay import oracle


def _csr(m, n, max_conn, length, seed=0):
    """A CSR with repeated targets within rows, an empty first row, and delays in [1, length)."""
    rng = np.random.default_rng(seed)
    counts = rng.integers(0, max_conn + 1, m)
    counts[0] = 0
    indptr = np.concatenate([[0], np.cumsum(counts)]).astype(np.int32)
    nnz = int(indptr[-1])
    return (rng.normal(size=nnz).astype(np.float32), rng.integers(0, n, nnz).astype(np.int32), indptr,
            rng.integers(1, length, nnz).astype(np.int32))


def _events(m, dtype, seed=1):
    rng = np.random.default_rng(seed)
    if dtype == 'bool':
        return rng.random(m) < 0.5
    values = rng.choice(np.array([2.0, -1.0, 0.0, 0.5, 0.0, 3.0]), m)
    return (np.round(values * 2) if np.dtype(dtype).kind == 'i' else values).astype(dtype)


class TestForward:
    prim = _csr_delay_deliver.primitive

    # int32 events in make test-long: int8 takes the same integer-event path in the default run
    @pytest.mark.parametrize('dtype', ['bool', 'int8', pytest.param('int32', marks=pytest.mark.long), 'float32'])
    def test_every_event_dtype_both_modes_and_far_steps_match_numpy(self, backend, dtype):
        data, indices, indptr, delays = _csr(13, 7, 9, 5)
        events = _events(13, dtype)
        ring = np.random.default_rng(2).normal(size=(5, 7)).astype(np.float32)
        for homogeneous in (False, True):
            w = np.array([0.7], np.float32) if homogeneous else data
            for weighted in (False, True):
                for t in (0, 3, 7, 1_000_003):
                    got = ej.csr_delay_deliver(ring, events, w, indices, indptr, delays, t, shape=(13, 7),
                                               weighted=weighted, backend=backend)
                    want = oracle.deliver(ring, events, w, indices, indptr, delays, t, weighted=weighted)
                    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

    def test_synapses_landing_on_one_slot_and_target_add_up(self, backend):
        got = ej.csr_delay_deliver(jnp.zeros((3, 2)), jnp.array([True, True]), jnp.array([1., 2., 4., 8.]),
                                   jnp.array([1, 1, 0, 1]), jnp.array([0, 3, 4]), jnp.array([2, 2, 1, 2]), 0,
                                   shape=(2, 2), backend=backend)
        np.testing.assert_array_equal(got, [[0, 0], [4, 0], [0, 11]])

    @pytest.mark.parametrize('t', [-1, 4, 5, 2 ** 31 - 1])
    def test_the_step_wraps_floor_modulo_the_ring(self, backend, t):
        got = ej.csr_delay_deliver(jnp.zeros((5, 3)), jnp.array([1.0]), jnp.array([1.0]), jnp.array([0, 1, 2]),
                                   jnp.array([0, 3]), jnp.array([1, 4, 3]), jnp.asarray(t, jnp.int32), shape=(1, 3),
                                   backend=backend)
        want = np.zeros((5, 3))
        for j, d in enumerate((1, 4, 3)):
            want[(t + d) % 5, j] = 1
        np.testing.assert_array_equal(got, want)

    def test_a_shared_delay_and_an_event_array(self, backend):
        data, indices, indptr, _ = _csr(9, 6, 5, 4)
        events = _events(9, 'bool')
        got = ej.csr_delay_deliver(jnp.zeros((4, 6)), ej.EventArray(events), data, indices, indptr, 2, 3,
                                   shape=(9, 6), backend=backend)
        np.testing.assert_allclose(got, oracle.deliver(np.zeros((4, 6)), events, data, indices, indptr,
                                                       np.array([2]), 3, weighted=False), rtol=1e-5, atol=1e-5)

    @pytest.mark.parametrize('dtype', ['int8', 'float32'])
    def test_graded_events_deliver_weighted_with_none_or_true_and_through_the_container(self, backend, dtype):
        data, indices, indptr, delays = _csr(9, 6, 5, 4)
        events = _events(9, dtype)
        want = oracle.deliver(np.zeros((4, 6)), events, data, indices, indptr, delays, 1, weighted=True)
        for weighted in (None, True):
            got = ej.csr_delay_deliver(jnp.zeros((4, 6)), ej.GradedEvents(events), data, indices, indptr, delays, 1,
                                       shape=(9, 6), weighted=weighted, backend=backend)
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        W = ej.CSR((data, indices, indptr), shape=(9, 6)).with_delays(delays)
        got = W.deliver(jnp.zeros((4, 6)), ej.GradedEvents(events), 1, backend=backend)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

    def test_a_nan_weighted_event_is_active_and_a_nan_binary_event_is_not(self, backend):
        # Semantics: weighted, NaN != 0 is an event; binary, an event is > 0 and NaN is none.
        args = (jnp.array([1.5]), jnp.array([0]), jnp.array([0, 1]), jnp.array([1]), 0)
        got = ej.csr_delay_deliver(jnp.zeros((2, 1)), jnp.array([jnp.nan]), *args, shape=(1, 1), weighted=True,
                                   backend=backend)
        assert np.isnan(np.asarray(got)[1, 0]) and np.asarray(got)[0, 0] == 0
        got = ej.csr_delay_deliver(jnp.zeros((2, 1)), jnp.array([jnp.nan]), *args, shape=(1, 1), backend=backend)
        np.testing.assert_array_equal(got, [[0.0], [0.0]])

    @pytest.mark.parametrize('bad', [np.nan, np.inf, -np.inf])
    def test_rows_without_events_add_nothing_whatever_their_weights(self, backend, bad):
        data, indices, indptr, delays = _csr(8, 5, 4, 4, seed=21)
        events = np.zeros(8, np.float32)
        events[::2] = 2.0
        rows = np.repeat(np.arange(8), np.diff(indptr))
        idle = events[rows] == 0
        data = data.copy()
        data[idle] = bad
        ring = np.random.default_rng(3).normal(size=(4, 5)).astype(np.float32)
        for weighted, ev in ((True, events), (False, events != 0)):
            got = np.asarray(ej.csr_delay_deliver(ring, ev, data, indices, indptr, delays, 3, shape=(8, 5),
                                                  weighted=weighted, backend=backend))
            assert np.isfinite(got).all()
            np.testing.assert_allclose(got, oracle.deliver(ring, ev, np.where(idle, 0, data), indices, indptr,
                                                           delays, 3, weighted=weighted), rtol=1e-5, atol=1e-5)

    def test_the_weight_cotangent_of_an_idle_row_is_an_exact_zero_even_against_nan(self, backend):
        data, indices, indptr, delays = _csr(8, 5, 4, 4, seed=22)
        events = np.zeros(8, np.float32)
        events[::2] = 2.0
        idle = events[np.repeat(np.arange(8), np.diff(indptr))] == 0
        _, vjp = jax.vjp(lambda d: ej.csr_delay_deliver(jnp.zeros((4, 5)), events, d, indices, indptr, delays, 3,
                                                        shape=(8, 5), weighted=True, backend=backend), data)
        (ct,) = vjp(jnp.full((4, 5), jnp.nan))
        np.testing.assert_array_equal(np.asarray(ct)[idle], 0.0)
        assert np.isnan(np.asarray(ct)[~idle]).all()

    def test_scalar_and_half_precision_data_deliver_in_the_rings_dtype(self, backend):
        for data in (0.5, jnp.float16(0.5), jnp.array([0.5, 0.5], jnp.float16)):
            got = ej.csr_delay_deliver(jnp.zeros((3, 2)), jnp.array([True]), data, jnp.array([0, 1]),
                                       jnp.array([0, 2]), jnp.array([1, 2]), 0, shape=(1, 2), backend=backend)
            assert got.dtype == jnp.float32
            np.testing.assert_array_equal(got, [[0, 0], [0.5, 0], [0, 0.5]])

    def test_a_float16_ring_keeps_its_dtype_on_every_backend(self, backend):
        # brainevent's numba refuses half precision; here every backend takes it (one contract).
        got = ej.csr_delay_deliver(jnp.zeros((3, 2), jnp.float16), jnp.array([True]),
                                   jnp.array([0.5, 0.25, 0.25], jnp.float16), jnp.array([0, 1, 1]), jnp.array([0, 3]),
                                   jnp.array([1, 2, 2]), 0, shape=(1, 2), backend=backend)
        assert got.dtype == jnp.float16
        np.testing.assert_array_equal(np.asarray(got, np.float32), [[0, 0], [0.5, 0], [0, 0.5]])

    def test_uint_delays_deliver_in_range_and_drop_the_rest_under_jit(self, backend):
        data, indices, indptr, delays = _csr(12, 7, 6, 6, seed=34)
        for dtype in (np.uint8, np.uint16, np.uint32):
            wide = (delays + (np.arange(delays.size) % 3) * 6).astype(dtype)  # a third in range, the rest >= L
            got = jax.jit(lambda d: ej.csr_delay_deliver(jnp.zeros((6, 7)), _events(12, 'bool', 35), data, indices,
                                                         indptr, d, 11, shape=(12, 7), backend=backend))(wide)
            np.testing.assert_allclose(got, oracle.deliver(np.zeros((6, 7)), _events(12, 'bool', 35), data, indices,
                                                           indptr, wide.astype(np.int64), 11, weighted=False),
                                       rtol=1e-5, atol=1e-5)

    def test_a_scan_reading_and_clearing_its_slot_matches_numpy(self, backend):
        data, indices, indptr, delays = _csr(20, 20, 6, 6, seed=3)
        rng = np.random.default_rng(4)
        spikes = ((rng.random((15, 20)) < 0.3) * rng.normal(size=(15, 20))).astype(np.float32)

        def step(carry, x):
            ring, t = carry
            ring = ej.csr_delay_deliver(ring, x, data, indices, indptr, delays, t, shape=(20, 20), weighted=True,
                                        backend=backend)
            arrived = ring[t % 6]
            return (ring.at[t % 6].set(0.), t + 1), arrived

        (ring, _), arrived = jax.jit(lambda s: jax.lax.scan(step, (jnp.zeros((6, 20)), jnp.int32(0)), s))(spikes)
        want_ring, want = np.zeros((6, 20)), []
        for k in range(15):
            want_ring = oracle.deliver(want_ring, spikes[k], data, indices, indptr, delays, k, weighted=True)
            want.append(want_ring[k % 6].copy())
            want_ring[k % 6] = 0
        np.testing.assert_allclose(arrived, np.stack(want), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(ring, want_ring, rtol=1e-5, atol=1e-5)

    def test_the_gradient_through_a_scan_with_a_traced_step_is_the_scatters(self, backend):
        data, indices, indptr, delays = _csr(8, 8, 4, 4, seed=8)
        spikes = jnp.asarray(np.random.default_rng(9).random((6, 8)) < 0.5)
        rows = np.repeat(np.arange(8), np.diff(indptr))

        def loss(d, deliver):
            def step(carry, x):
                ring, t = carry
                ring = deliver(ring, x, d, t)
                return (ring.at[t % 4].set(0.), t + 1), ring[t % 4]
            return jnp.sum(jnp.sin(jax.lax.scan(step, (jnp.zeros((4, 8)), jnp.int32(0)), spikes)[1]))

        ours = lambda r, x, d, t: ej.csr_delay_deliver(r, x, d, indices, indptr, delays, t, shape=(8, 8),  # noqa
                                                         backend=backend)
        scatter = lambda r, x, d, t: r.at[(t + delays) % 4, indices].add(d * x[rows].astype(d.dtype))  # noqa: E731
        np.testing.assert_allclose(jax.grad(loss)(jnp.asarray(data), ours),
                                   jax.grad(loss)(jnp.asarray(data), scatter), rtol=1e-5, atol=1e-5)


class TestSteps64:
    prim = _csr_delay_deliver.primitive

    def test_x64_float64_rings_and_int64_steps_past_int32(self, backend):
        data, indices, indptr, delays = _csr(20, 12, 5, 7, seed=21)
        events = _events(20, 'bool')
        with jax.enable_x64(True):
            t = np.int64(2) ** 33 + 5
            wide = delays.astype(np.int64) + np.int64(3) * 2 ** 31  # traced and out of range: dropped
            f = jax.jit(lambda d, s: ej.csr_delay_deliver(jnp.zeros((7, 12), jnp.float64), events,
                                                          data.astype(np.float64), indices, indptr, d, s,
                                                          shape=(20, 12), backend=backend))
            got = f(jnp.asarray(delays.astype(np.int64)), jnp.asarray(t))
            assert got.dtype == jnp.float64
            np.testing.assert_allclose(got, oracle.deliver(np.zeros((7, 12)), events, data, indices, indptr, delays,
                                                           int(t % 7), weighted=False), rtol=1e-12, atol=1e-12)
            np.testing.assert_array_equal(f(jnp.asarray(wide), jnp.asarray(t)), np.zeros((7, 12)))


class TestArguments:
    def _call(self, delays, t=0, ring=None, events=jnp.array([True]), **kw):
        ring = jnp.zeros((4, 2)) if ring is None else ring
        return ej.csr_delay_deliver(ring, events, jnp.array([1.0]), jnp.array([0, 1]), jnp.array([0, 2]), delays, t,
                                    shape=(1, 2), **kw)

    @pytest.mark.parametrize('bad', [[0, 1], [1, 4], [-1, 2]])
    def test_a_concrete_delay_outside_the_ring_raises_as_jax_numpy_or_one_number(self, bad):
        for delays in (jnp.array(bad), np.array(bad), bad[0] if bad[0] != 1 else bad[1]):
            with pytest.raises(ValueError, match='delays'):
                self._call(delays)

    def test_concrete_delays_closed_over_by_jit_are_checked(self):
        bad = jnp.array([1, 9])
        with pytest.raises(ValueError, match='delays'):
            jax.jit(lambda r: self._call(bad, ring=r))(jnp.zeros((4, 2)))

    def test_a_weighted_flag_that_contradicts_the_events_raises(self):
        with pytest.raises(ValueError, match='contradicts'):
            self._call(jnp.array([1, 2]), events=ej.GradedEvents(jnp.ones(1)), weighted=False)
        with pytest.raises(ValueError, match='contradicts'):
            self._call(jnp.array([1, 2]), events=ej.EventArray(jnp.ones(1, bool)), weighted=True)

    def test_wrong_types_are_type_errors(self):
        with pytest.raises(TypeError, match='t must be one integer'):
            self._call(jnp.array([1, 2]), t=1.0)
        with pytest.raises(TypeError, match='delays must be integers'):
            self._call(jnp.array([1.0, 2.0]))
        with pytest.raises(TypeError, match='ring must be a float array'):
            self._call(jnp.array([1, 2]), ring=jnp.zeros((4, 2), jnp.int32))

    def test_wrong_shapes_are_named(self):
        with pytest.raises(ValueError, match='shape'):
            self._call(jnp.array([1, 2]), ring=jnp.zeros(4))
        with pytest.raises(ValueError, match='2 columns'):
            self._call(jnp.array([1, 2]), ring=jnp.zeros((4, 3)))
        with pytest.raises(ValueError, match='delays must have length 2'):
            self._call(jnp.array([1, 2, 3]))
        with pytest.raises(TypeError, match='t must be one integer'):
            self._call(jnp.array([1, 2]), t=jnp.array([1, 2]))

    def test_delays_or_a_step_in_time_units_show_the_conversion_to_steps(self):
        u = pytest.importorskip('brainunit', reason=UNITS_EXTRA)
        with pytest.raises(TypeError, match=r'delays must be integer steps, got a Quantity in ms; .*/ dt'):
            self._call(jnp.array([1, 2]) * u.ms)
        with pytest.raises(TypeError, match=r't must be integer steps, got a Quantity'):
            self._call(jnp.array([1, 2]), t=1 * u.ms)
        with pytest.raises(TypeError, match=r'fcn_delay_deliver\(\): delays must be integer steps'):
            ej.fcn_delay_deliver(jnp.zeros((3, 2)), jnp.array([True]), 1.0, jnp.array([[0, 1]]),
                                 jnp.array([[1, 2]]) * u.ms, 0, shape=(1, 2))
        with pytest.raises(TypeError, match=r'CSRDelayLayout.build\(\): delays must be integer steps'):
            ej.CSRDelayLayout.build(jnp.ones(2), jnp.array([0, 1]), jnp.array([0, 2]), jnp.array([1, 2]) * u.ms,
                                    shape=(1, 2))

    def test_a_ring_in_volts_takes_millivolt_weights(self):
        u = pytest.importorskip('brainunit', reason=UNITS_EXTRA)
        got = ej.csr_delay_deliver(jnp.ones((3, 2)) * u.volt, jnp.array([True]), jnp.array([1.0]) * u.mV,
                                   jnp.array([0, 1]), jnp.array([0, 2]), jnp.array([1, 2]), 0, shape=(1, 2))
        np.testing.assert_allclose(np.asarray(got.to_decimal(u.mV)), [[1000, 1000], [1001, 1000], [1000, 1001]],
                                   rtol=1e-6)


class TestLayout:
    prim = _csr_delay_deliver.primitive

    def test_the_layout_sorts_rows_by_delay_and_delivers_as_the_plain_call(self, backend):
        data, indices, indptr, delays = _csr(13, 7, 9, 5, seed=4)
        lay = ej.CSRDelayLayout.build(data, indices, indptr, delays, shape=(13, 7))
        assert lay.ring_length == int(delays.max()) + 1
        d = np.asarray(lay.delays)
        for i in range(13):
            assert (np.diff(d[indptr[i]:indptr[i + 1]]) >= 0).all()
        events = _events(13, 'float32')
        for weighted in (False, True):
            for t in (0, -2, 2 ** 31 - 1):
                got = ej.csr_delay_deliver_layout(jnp.zeros((5, 7)), events, lay, t, weighted=weighted,
                                                  backend=backend)
                want = ej.csr_delay_deliver(jnp.zeros((5, 7)), events, data, indices, indptr, delays, t,
                                            shape=(13, 7), weighted=weighted, backend=backend)
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)

    def test_a_layout_is_a_pytree_under_jit_and_refuses_a_short_ring(self, backend):
        data, indices, indptr, delays = _csr(6, 4, 3, 4, seed=5)
        lay = ej.CSRDelayLayout.build(data, indices, indptr, delays, shape=(6, 4))
        f = jax.jit(lambda layout, x: ej.csr_delay_deliver_layout(jnp.zeros((4, 4)), x, layout, 1, backend=backend))
        events = _events(6, 'bool')
        np.testing.assert_allclose(f(lay, events), oracle.deliver(np.zeros((4, 4)), events, data, indices, indptr,
                                                                  delays, 1, weighted=False), rtol=1e-5, atol=1e-5)
        with pytest.raises(ValueError, match='layout needs'):
            ej.csr_delay_deliver_layout(jnp.zeros((2, 4)), events, lay, 0)

    def test_a_delay_too_long_for_any_ring_is_named_without_allocating_the_ring(self):
        # 2**31 steps of 10 targets: the ring such a delay needs would be 86 GB.
        with pytest.raises(ValueError, match=r'longest delay, 2147483647 steps, needs a ring of 2147483648 x 10'):
            ej.CSRDelayLayout.build(np.ones(2, np.float32), np.array([0, 1]), np.array([0, 1, 2]),
                                    np.array([1, 2 ** 31 - 1]), shape=(2, 10))
        lay = ej.CSRDelayLayout.build(np.ones(2, np.float32), np.array([0, 1]), np.array([0, 1, 2]),
                                      np.array([1, 3]), shape=(2, 10))
        assert lay.ring_length == 4

    def test_layout_gradients_are_the_plain_calls(self, backend):
        data, indices, indptr, delays = _csr(6, 4, 3, 4, seed=6)
        lay = ej.CSRDelayLayout.build(data, indices, indptr, np.full_like(delays, 2), shape=(6, 4))
        x = jnp.asarray(_events(6, 'float32'))
        g_lay = jax.grad(lambda v: jnp.sum(ej.csr_delay_deliver_layout(jnp.zeros((4, 4)), v, lay, 0, weighted=True,
                                                                       backend=backend) ** 2))(x)
        g = jax.grad(lambda v: jnp.sum(ej.csr_delay_deliver(jnp.zeros((4, 4)), v, data, indices, indptr, 2, 0,
                                                            shape=(6, 4), weighted=True, backend=backend) ** 2))(x)
        np.testing.assert_allclose(g_lay, g, rtol=1e-5, atol=1e-5)
