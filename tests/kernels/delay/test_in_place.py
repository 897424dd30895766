"""Delivery updates the ring in place where the caller lets it, and never changes a ring it still holds.

Every call aliases the ring to the result; under ``jit`` with donation, and
as a ``lax.scan`` carry, the result must be the ring's own buffer. Without
donation the caller's ring must keep its values (the kernels add into the
buffer they are given, so a missing copy would show here). The numba
kernel's path for large structures (rows listed, then prefetched ahead)
must change no result.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.delay.csr_delay_deliver import _csr_delay_deliver
from tests.kernels.delay import oracle

SPIKES = np.array([True, False, True, True, False, False, True])


def _deliver(backend, data, indices, indptr, delays):
    return lambda ring, spikes, t: ej.csr_delay_deliver(ring, spikes, data, indices, indptr, delays, t, shape=(7, 5),
                                                         backend=backend)


class TestInPlace:
    prim = _csr_delay_deliver.primitive

    def test_a_donated_ring_is_updated_in_its_own_buffer(self, backend):
        ring, data, indices, indptr, delays = oracle.problem(11)
        want = oracle.deliver(ring, SPIKES, data, indices, indptr, delays, 3, weighted=False)
        f = jax.jit(_deliver(backend, data, indices, indptr, delays), donate_argnums=0)
        donated = jnp.array(ring)
        address = donated.unsafe_buffer_pointer()
        got = f(donated, SPIKES, 3)
        assert got.unsafe_buffer_pointer() == address
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)

    def test_the_callers_ring_keeps_its_values_without_donation(self, backend):
        ring, data, indices, indptr, delays = oracle.problem(12)
        kept = jnp.array(ring)
        f = jax.jit(_deliver(backend, data, indices, indptr, delays))
        for _ in range(2):
            got = f(kept, SPIKES, 1)
        np.testing.assert_array_equal(kept, ring)
        np.testing.assert_allclose(got, oracle.deliver(ring, SPIKES, data, indices, indptr, delays, 1,
                                                       weighted=False), rtol=1e-5, atol=1e-6)
        np.testing.assert_array_equal(ej.csr_delay_deliver(kept, SPIKES, data, indices, indptr, delays, 1,
                                                           shape=(7, 5), backend=backend), got)
        np.testing.assert_array_equal(kept, ring)

    def test_a_scan_step_delivers_into_its_carry_without_copying_the_ring(self, backend):
        ring, data, indices, indptr, delays = oracle.problem(13)
        rng = np.random.default_rng(13)
        spikes = rng.random((6, 7)) < 0.5
        step = _deliver(backend, data, indices, indptr, delays)

        def run(r, s):
            # A model's step: read the input due now, fire (here: unless it is NaN), deliver, clear the slot read.
            def body(r, x):
                t, sp = x
                now = jnp.mod(t, r.shape[0])
                current = r[now]
                r = step(r, sp & ~jnp.isnan(current.sum()), t)
                return r.at[now].set(0), current.sum()
            return jax.lax.scan(body, r, (jnp.arange(6), s))

        got, _ = jax.jit(run)(jnp.array(ring), spikes)
        want = np.asarray(ring, np.float64)
        for t in range(6):
            want = oracle.deliver(want, spikes[t], data, indices, indptr, delays, t, weighted=False)
            want[t % want.shape[0]] = 0
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
        hlo = jax.jit(run, donate_argnums=0).lower(jnp.array(ring), spikes).compile().as_text()
        assert 'f32[4,5]{1,0} copy(' not in hlo  # neither the loop nor its entry copies the ring


class TestJaxEventRowsInPlace(TestInPlace):
    """The jax kernel's event-row loops (past its size bound, lowered here) carry the ring: never a copy."""

    prim = None

    @pytest.fixture(autouse=True)
    def _event_rows_from_one_entry(self, monkeypatch):
        from eventjax.kernels.delay import jax_impl
        monkeypatch.setattr(jax_impl, 'SMALL', 1)

    @pytest.fixture
    def backend(self):
        return 'jax'


@pytest.mark.filterwarnings('ignore::DeprecationWarning')
class TestNumbaLargePath:
    """From ``PREFETCH_MIN_ENTRIES`` stored entries the numba kernel lists the event rows and prefetches ahead."""

    def test_only_a_matrix_that_can_reach_the_bound_gets_the_pipelined_kernel(self):
        pytest.importorskip('numba')
        from eventjax.kernels.common.numba.events import PREFETCH_MIN_ENTRIES
        from eventjax.kernels.delay import numba_impl

        for weighted, small, large in ((False, numba_impl._binary, numba_impl._binary_pipelined),
                                       (True, numba_impl._weighted, numba_impl._weighted_pipelined)):
            assert numba_impl.csr_delay_deliver_kernel(shape=(PREFETCH_MIN_ENTRIES - 1, 1), weighted=weighted) is small
            assert numba_impl.csr_delay_deliver_kernel(shape=(PREFETCH_MIN_ENTRIES, 1), weighted=weighted) is large

    @pytest.mark.parametrize('weighted', [False, True])
    @pytest.mark.parametrize('homogeneous', [False, True])
    def test_the_prefetching_path_matches_numpy(self, weighted, homogeneous):
        pytest.importorskip('numba')
        from eventjax.kernels.common.numba.events import PREFETCH_MIN_ENTRIES, ROWS_AHEAD
        from eventjax.kernels.delay import numba_impl

        k, n, length = 50, 300, 6
        m = PREFETCH_MIN_ENTRIES // k + 3
        rng = np.random.default_rng(5)
        indices = rng.integers(0, n, m * k, dtype=np.int32)
        indices[::97] = -4  # dropped: negative
        indices[1::89] = n + 2  # dropped: past the last column
        delays = rng.integers(1, length, m * k, dtype=np.int32)
        delays[2::83] = 0  # dropped: would land in the slot just read
        delays[3::79] = length
        data = np.array([0.5], np.float32) if homogeneous else rng.standard_normal(m * k, dtype=np.float32)
        indptr = np.arange(0, m * k + 1, k, dtype=np.int32)
        rows = [0, 1, 2 * ROWS_AHEAD + 1, 777, m // 2, m - 2, m - 1]
        events = np.zeros(m, np.float32)
        events[rows] = rng.standard_normal(len(rows)).astype(np.float32) if weighted else 1.0
        ring = rng.standard_normal((length, n)).astype(np.float32)
        out = ring.copy()
        kernel = numba_impl.csr_delay_deliver_kernel(shape=(m, n), weighted=weighted)
        assert kernel in (numba_impl._binary_pipelined, numba_impl._weighted_pipelined)
        kernel(ring, events, data, indices, indptr, delays, np.array([-2], np.int32), out, np.zeros(8, np.uint8))
        want = ring.astype(np.float64)
        for i in rows:
            lo, hi = indptr[i], indptr[i + 1]
            j, d = indices[lo:hi], delays[lo:hi]
            w = np.broadcast_to(data, (m * k,))[lo:hi].astype(np.float64) * (events[i] if weighted else 1.0)
            ok = (j >= 0) & (j < n) & (d >= 1) & (d < length)
            np.add.at(want, ((-2 + d[ok]) % length, j[ok]), w[ok])
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-4)
