"""csr_delay_deliver on every backend: values, bad delays, autodiff and vmap against a dense NumPy oracle."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.delay.csr_delay_deliver import _csr_delay_deliver
from tests.kernels.delay import oracle

SPIKES = np.array([True, False, True, True, False, False, True])
GRADED = np.array([0.5, 0.0, -2.0, 1.0, 0.0, 3.0, 0.0], np.float32)


def _run(backend, ring, events, data, indices, indptr, delays, t, **kw):
    return ej.csr_delay_deliver(ring, events, data, indices, indptr, delays, t, shape=(7, 5), backend=backend, **kw)


class TestValues:
    prim = _csr_delay_deliver.primitive

    @pytest.mark.parametrize('homogeneous', [False, True])
    @pytest.mark.parametrize('shared_delay', [False, True])
    def test_binary_and_weighted_delivery_match_numpy(self, backend, homogeneous, shared_delay):
        ring, data, indices, indptr, delays = oracle.problem(1, homogeneous=homogeneous, shared_delay=shared_delay)
        for events, weighted in ((SPIKES, False), (GRADED, True), (GRADED, False)):
            for t in (0, 5, -3):
                got = _run(backend, ring, events, data, indices, indptr, delays, t, weighted=weighted)
                want = oracle.deliver(ring, events, data, indices, indptr, delays, t, weighted=weighted)
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)

    def test_graded_events_are_weighted_by_default_and_plain_arrays_binary(self, backend):
        ring, data, indices, indptr, delays = oracle.problem(2)
        for events, weighted in ((ej.GradedEvents(GRADED), True), (GRADED, False), (ej.EventArray(GRADED), False)):
            got = _run(backend, ring, events, data, indices, indptr, delays, 1)
            np.testing.assert_allclose(got, oracle.deliver(ring, GRADED, data, indices, indptr, delays, 1,
                                                           weighted=weighted), rtol=1e-5, atol=1e-6)

    def test_traced_step_under_jit_matches(self, backend):
        ring, data, indices, indptr, delays = oracle.problem(3)
        f = jax.jit(lambda r, s, t: _run(backend, r, s, data, indices, indptr, delays, t))
        for t in (0, 1, 7):
            np.testing.assert_allclose(f(ring, SPIKES, t), oracle.deliver(ring, SPIKES, data, indices, indptr, delays,
                                                                            t, weighted=False), rtol=1e-5, atol=1e-6)

    def test_weighted_delivery_skips_zero_events_even_with_nan_weights(self, backend):
        ring, data, indices, indptr, delays = oracle.problem(4)
        data = np.full_like(data, np.nan)
        events = np.zeros(7, np.float32)
        np.testing.assert_array_equal(_run(backend, ring, events, data, indices, indptr, delays, 0), ring)

    def test_out_of_range_delays_are_dropped_under_jit(self, backend):
        ring, data, indices, indptr, delays = oracle.problem(5)
        delays = delays.copy()
        delays[::3] = 9
        delays[1::5] = -1
        delays[2::7] = 0
        got = jax.jit(lambda d: _run(backend, ring, SPIKES, data, indices, indptr, d, 2))(delays)
        np.testing.assert_allclose(got, oracle.deliver(ring, SPIKES, data, indices, indptr, delays, 2,
                                                       weighted=False), rtol=1e-5, atol=1e-6)

    def test_empty_matrix_and_no_events_leave_the_ring(self, backend):
        ring = np.ones((3, 5), np.float32)
        empty = _run(backend, ring, SPIKES, np.ones(0, np.float32), np.zeros(0, np.int32), np.zeros(8, np.int32),
                     np.zeros(0, np.int32), 0)
        np.testing.assert_array_equal(empty, ring)
        _, data, indices, indptr, delays = oracle.problem(6, length=3)
        quiet = _run(backend, ring, np.zeros(7, bool), data, indices, indptr, delays, 0)
        np.testing.assert_array_equal(quiet, ring)


class TestAutodiff:
    prim = _csr_delay_deliver.primitive

    def test_grads_wrt_ring_weights_and_event_values_are_the_linear_maps(self, backend):
        ring, data, indices, indptr, delays = oracle.problem(7)
        cot = np.random.default_rng(0).standard_normal(ring.shape).astype(np.float32)
        f = lambda r, w, x: jnp.sum(_run(backend, r, x, w, indices, indptr, delays, 3, weighted=True) * cot)
        g_ring, g_w, g_x = jax.jit(jax.grad(f, argnums=(0, 1, 2)))(ring, data, GRADED)
        np.testing.assert_allclose(g_ring, cot)
        want_w, want_x = np.zeros(data.shape), np.zeros(7)
        for i in range(7):
            for k in range(indptr[i], indptr[i + 1]):
                c = cot[(3 + delays[k]) % 4, indices[k]]
                want_w[k] += c * GRADED[i]
                want_x[i] += c * data[k]
        np.testing.assert_allclose(g_w, want_w, rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(g_x, want_x, rtol=1e-5, atol=1e-6)

    def test_forward_and_reverse_mode_agree_for_binary_events(self, backend):
        ring, data, indices, indptr, delays = oracle.problem(8, homogeneous=True)
        f = lambda w: _run(backend, ring, SPIKES, w, indices, indptr, delays, 1)
        dw = jnp.ones_like(data)
        _, tangent = jax.jvp(f, (data,), (dw,))
        _, vjp = jax.vjp(f, data)
        cot = jnp.asarray(np.random.default_rng(1).standard_normal(ring.shape), jnp.float32)
        np.testing.assert_allclose(jnp.sum(tangent * cot), jnp.sum(vjp(cot)[0] * dw), rtol=1e-5)


class TestBatching:
    prim = _csr_delay_deliver.primitive

    def test_vmap_over_rings_and_events_delivers_each(self, backend):
        ring, data, indices, indptr, delays = oracle.problem(9)
        rings = np.stack([ring, 2 * ring, -ring])
        events = np.stack([SPIKES, ~SPIKES, SPIKES])
        got = jax.vmap(lambda r, s: _run(backend, r, s, data, indices, indptr, delays, 2))(rings, events)
        for b in range(3):
            np.testing.assert_allclose(got[b], oracle.deliver(rings[b], events[b], data, indices, indptr, delays, 2,
                                                              weighted=False), rtol=1e-5, atol=1e-6)


class TestArguments:
    def test_a_delay_past_the_ring_names_the_fix(self):
        ring, data, indices, indptr, delays = oracle.problem(10)
        with pytest.raises(ValueError, match=r'outside \[1, 4\).*at least max\(delays\) \+ 1 = 10 steps'):
            _run(None, ring, SPIKES, data, indices, indptr, np.full_like(delays, 9), 0)
        with pytest.raises(ValueError, match=r'delays\[0\] = -1'):
            _run(None, ring, SPIKES, data, indices, indptr, np.full_like(delays, -1), 0)
        with pytest.raises(ValueError, match=r'delays\[0\] = 0, but a delay is at least 1 step'):
            _run(None, ring, SPIKES, data, indices, indptr, np.zeros_like(delays), 0)

    def test_bad_operands_are_named(self):
        ring, data, indices, indptr, delays = oracle.problem(11)
        with pytest.raises(TypeError, match='delays must be integers'):
            _run(None, ring, SPIKES, data, indices, indptr, delays.astype(np.float32), 0)
        with pytest.raises(ValueError, match='ring must have 5 columns'):
            _run(None, ring[:, :3], SPIKES, data, indices, indptr, delays, 0)
        with pytest.raises(TypeError, match='t must be one integer'):
            _run(None, ring, SPIKES, data, indices, indptr, delays, 0.5)
        with pytest.raises(TypeError, match='weighted must be'):
            _run(None, ring, SPIKES, data, indices, indptr, delays, 0, weighted='yes')


class TestRingAndStep:
    prim = _csr_delay_deliver.primitive

    def test_a_bfloat16_ring_is_a_type_error_on_every_backend(self, backend):
        ring, data, indices, indptr, delays = oracle.problem(12)
        with pytest.raises(TypeError, match='ring must be a float array, float16, float32 or float64'):
            _run(backend, ring.astype(jnp.bfloat16), SPIKES, data, indices, indptr, delays, 0)

    def test_a_python_int_step_past_int32_keeps_its_slot(self, backend):
        ring, data, indices, indptr, delays = oracle.problem(13)
        t = 2 ** 40 + 3
        got = _run(backend, ring, SPIKES, data, indices, indptr, delays, t)
        want = oracle.deliver(ring, SPIKES, data, indices, indptr, delays, t % ring.shape[0], weighted=False)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(got, _run(backend, ring, SPIKES, data, indices, indptr, delays, -(2 ** 40) + 3))


class TestLargerProblems:
    prim = _csr_delay_deliver.primitive

    def test_event_driven_layout_matches_numpy_past_the_small_size(self, backend):
        # 40,000 synapses: the jax backend's padded event rows (and its fallback for many events) run.
        rng = np.random.default_rng(12)
        m, n, k, length = 400, 300, 100, 6
        indptr = np.arange(m + 1, dtype=np.int32) * k
        indices = rng.integers(0, n, m * k).astype(np.int32)
        data = rng.standard_normal(m * k).astype(np.float32)
        delays = rng.integers(0, length, m * k).astype(np.int32)  # some 0: dropped under jit
        ring = rng.standard_normal((length, n)).astype(np.float32)
        f = jax.jit(lambda s: ej.csr_delay_deliver(ring, s, data, indices, indptr, delays, 4, shape=(m, n),
                                                   backend=backend))
        for rate in (0.02, 0.9):
            spikes = rng.random(m) < rate
            np.testing.assert_allclose(f(spikes), oracle.deliver(ring, spikes, data, indices, indptr, delays, 4,
                                                                 weighted=False), rtol=1e-4, atol=1e-4)


class TestJaxEventRowCapacities:
    """The jax kernel's event rows past its size bound (lowered here): passes of rows exactly filled and
    one past, every event, no event, binary and graded, and a row longer than the padded width."""

    M, N, K, LENGTH = 128, 40, 8, 5  # 1,024 entries; padded width 16, so 32 rows a pass

    @pytest.fixture(autouse=True)
    def _event_rows_from_1024(self, monkeypatch):
        from eventjax.kernels.delay import jax_impl
        monkeypatch.setattr(jax_impl, 'SMALL', 1024)

    def problem(self, long_row):
        rng = np.random.default_rng(21)
        lengths = np.full(self.M, self.K)
        if long_row:
            lengths[0], lengths[1:10] = 35, 5  # same entry count; row 0 takes three pieces of the width
        indptr = np.r_[0, np.cumsum(lengths)].astype(np.int32)
        nnz = int(indptr[-1])
        indices = rng.integers(0, self.N, nnz).astype(np.int32)
        indices[::29] = -1  # dropped
        data = rng.standard_normal(nnz).astype(np.float32)
        delays = rng.integers(1, self.LENGTH, nnz).astype(np.int32)
        ring = rng.standard_normal((self.LENGTH, self.N)).astype(np.float32)
        return ring, data, indices, indptr, delays

    def check(self, long_row, counts, *, first_row=False):
        ring, data, indices, indptr, delays = self.problem(long_row)
        f = jax.jit(lambda s, w: ej.csr_delay_deliver(ring, s, data, indices, indptr, delays, 3, shape=(self.M, self.N),
                                                      backend='jax', weighted=w), static_argnums=1)
        for count in counts:
            rng = np.random.default_rng(count)
            rows = rng.choice(self.M, count, replace=False)
            if first_row and count:
                rows[0] = 0
            spikes = np.zeros(self.M, bool)
            spikes[rows] = True
            # Graded: nonzero values (negative included) are events with their value.
            graded = np.where(spikes, rng.choice([-1.5, 0.5, 2.0], self.M), 0.0).astype(np.float32)
            for events, weighted in ((spikes, False), (graded, True)):
                want = oracle.deliver(ring, events, data, indices, indptr, delays, 3, weighted=weighted)
                np.testing.assert_allclose(f(events, weighted), want, rtol=1e-5, atol=1e-5)

    def test_each_pass_exactly_full_and_one_past(self):
        self.check(False, (0, 31, 32, 33, 64, 65, self.M))

    def test_an_event_row_longer_than_the_width_is_read_in_pieces(self):
        self.check(True, (1, 32, 33), first_row=True)
