"""Cases where the newest operators once left the contract of ``docs/semantics.rst``, checked on every cpu backend.

Each class is one sentence of the Semantics page and the inputs that broke
it: float16 sums past 2,048, wide integers (NumPy int64 while
``jax_enable_x64`` is off, int64 past int32 while it is on), out-of-range
columns of per-synapse products, tiny float64 events, and CSR structure
with entries past ``indptr[m]``.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.csr.binary_csrmv import _binary_csrmv

BACKENDS = ('jax', 'numba', 'warp')
WIDE = 2 ** 32 + 2  # wraps onto 2 when narrowed to int32


class TestFloat16SumsAccumulateInFloat32:
    """3,000 float16 weights of 0.1 onto one target sum to 300 on every backend (float16 steps stall at 256)."""

    N = 3000

    def _structure(self):
        n = self.N
        return (jnp.full(n, 0.1, jnp.float16), jnp.zeros(n, jnp.int32), jnp.arange(n + 1, dtype=jnp.int32))

    @pytest.mark.parametrize('backend', BACKENDS)
    def test_scatters_of_csr_and_fcn_products(self, backend):
        d, i, p = self._structure()
        n, ev = self.N, jnp.ones(self.N, bool)
        sums = [
            ej.binary_csrmv(d, i, p, ev, shape=(n, 1), transpose=True, backend=backend)[0],
            ej.csrmv(d, i, p, jnp.ones(n, jnp.float16), shape=(n, 1), transpose=True, backend=backend)[0],
            ej.binary_csrmm(d, i, p, jnp.ones((n, 2), bool), shape=(n, 1), transpose=True, backend=backend)[0, 1],
            ej.csrmm(d, i, p, jnp.ones((n, 2), jnp.float16), shape=(n, 1), transpose=True, backend=backend)[0, 1],
            ej.binary_fcnmv(d.reshape(n, 1), i.reshape(n, 1), ev, shape=(n, 1), transpose=True, backend=backend)[0],
            ej.fcnmv(d.reshape(n, 1), i.reshape(n, 1), jnp.ones(n, jnp.float16), shape=(n, 1), transpose=True,
                     backend=backend)[0],
            ej.binary_fcnmm(d.reshape(n, 1), i.reshape(n, 1), jnp.ones((n, 2), bool), shape=(n, 1), transpose=True,
                            backend=backend)[0, 1],
        ]
        for s in sums:
            assert s.dtype == jnp.float16
            np.testing.assert_allclose(float(s), 300.0, rtol=1e-2)

    @pytest.mark.parametrize('backend', BACKENDS)
    def test_deliveries_into_a_float16_ring(self, backend):
        d, i, p = self._structure()
        n = self.N
        ring = jnp.zeros((3, 1), jnp.float16)
        delays = jnp.ones(n, jnp.int32)
        binary = ej.csr_delay_deliver(ring, jnp.ones(n, bool), d, i, p, delays, 0, shape=(n, 1), backend=backend)
        graded = ej.csr_delay_deliver(ring, ej.GradedEvents(jnp.ones(n, jnp.float16)), d, i, p, delays, 0,
                                      shape=(n, 1), backend=backend)
        A = ej.CSR((d, i, p), shape=(n, 1)).with_delays(delays)
        layout = A.deliver(A.init_ring(3), jnp.ones(n, bool), 0, backend=backend)
        for r in (binary, graded, layout):
            assert r.dtype == jnp.float16
            np.testing.assert_allclose(np.asarray(r, np.float32), [[0.0], [300.0], [0.0]], rtol=1e-2)

    @pytest.mark.parametrize('backend', BACKENDS)
    def test_graded_events_times_a_csr(self, backend):
        d, i, p = self._structure()
        with ej.config.override(cpu=backend):
            y = ej.GradedEvents(jnp.ones(self.N, jnp.float16)) @ ej.CSR((d, i, p), shape=(self.N, 1))
        np.testing.assert_allclose(float(y[0]), 300.0, rtol=1e-2)

    @pytest.mark.parametrize('backend', BACKENDS)
    def test_jitc_scatter(self, backend):
        # 4,096 columns of prob 1 and weight 1 onto each of 2 targets: 4,096, not float16's stalled 2,048.
        y = ej.binary_jitcmv(jnp.ones((1,), jnp.float16), jnp.ones(4096, bool), seed=0, prob=1.0, shape=(4096, 2),
                             transpose=True, backend=backend)
        np.testing.assert_allclose(np.asarray(y, np.float32), [4096.0, 4096.0])


def _deliver(backend, delays, t=0, **kwargs):
    ring = jnp.zeros((5, 3), jnp.float32)  # 5 steps: 2**32 is not a multiple, so a wrapped step shows
    return ej.csr_delay_deliver(ring, jnp.array([True]), jnp.ones(1), jnp.array([1]), jnp.array([0, 1]), delays, t,
                                shape=(1, 3), backend=backend, **kwargs)


@pytest.mark.parametrize('x64', [False, True])
class TestWideIntegersAreSeenBeforeNarrowing:
    """Delays, steps, counts, ids and rows keep their value whatever their width and the x64 flag."""

    @pytest.mark.parametrize('backend', BACKENDS)
    def test_a_numpy_int64_delay_past_int32_is_refused_or_dropped(self, backend, x64):
        with jax.enable_x64(x64):
            wide = np.array([WIDE], np.int64)
            with pytest.raises(ValueError, match='outside'):
                _deliver(backend, wide)
            with pytest.raises(ValueError, match='outside'):
                ej.fcn_delay_deliver(jnp.zeros((5, 3)), jnp.array([True]), 1.0, jnp.array([[1]]), wide.reshape(1, 1),
                                     0, shape=(1, 3), backend=backend)
            assert float(_deliver(backend, wide, validate=False).sum()) == 0.0
            assert float(_deliver(backend, np.int64(WIDE), validate=False).sum()) == 0.0

    @pytest.mark.parametrize('backend', BACKENDS)
    def test_a_numpy_int64_step_keeps_its_slot(self, backend, x64):
        with jax.enable_x64(x64):
            for t in (np.int64(2 ** 32 + 3), np.array([2 ** 32 + 3], np.int64), 2 ** 32 + 3):
                ring = _deliver(backend, np.array([1]), t)
                want = np.zeros((5, 3))
                want[(2 ** 32 + 3 + 1) % 5, 1] = 1.0
                np.testing.assert_array_equal(ring, want)

    def test_delayed_csr_reads_a_step_past_int32(self, x64):
        with jax.enable_x64(x64):
            ring = jnp.arange(10.0).reshape(5, 2)
            for t in (2 ** 31 + 1, np.int64(2 ** 32 + 3), 2 ** 40 + 2):
                np.testing.assert_array_equal(ej.DelayedCSR.read(ring, t), ring[int(t) % 5])

    @pytest.mark.parametrize('backend', BACKENDS)
    def test_a_wide_count_is_an_overflow_not_a_small_count(self, backend, x64):
        data, indices, indptr = jnp.array([1.0, 2.0, 3.0]), jnp.array([0, 1, 1]), jnp.array([0, 2, 3])
        with jax.enable_x64(x64):
            ids = np.array([1, 0], np.int64)
            with pytest.raises(ValueError, match='do not fit'):
                ej.binary_csrmv_indexed(data, indices, indptr, None, (ids, np.int64(2 ** 32 + 1)), shape=(2, 2),
                                        transpose=True, backend=backend)
            traced = jax.jit(lambda c: ej.binary_csrmv_indexed(data, indices, indptr, None, (ids, c), shape=(2, 2),
                                                               transpose=True, backend=backend))
            count = jnp.asarray(2 ** 32 + 1 if x64 else 2 ** 31 - 1)
            assert np.isnan(np.asarray(traced(count))).all()

    @pytest.mark.parametrize('backend', BACKENDS)
    def test_a_wide_id_or_row_is_out_of_range_not_wrapped(self, backend, x64):
        data, indices, indptr = jnp.array([1.0, 2.0, 3.0]), jnp.array([0, 1, 1]), jnp.array([0, 2, 3])
        with jax.enable_x64(x64):
            got = ej.binary_csrmv_indexed(data, indices, indptr, None, (np.array([2 ** 32 + 1, 0], np.int64), 2),
                                          shape=(2, 2), transpose=True, backend=backend)
            np.testing.assert_array_equal(got, [1.0, 2.0])
            rows = ej.csr_slice_rows(data, indices, indptr, np.array([1, 2 ** 32 + 1], np.int64), shape=(2, 2),
                                     backend=backend)
            np.testing.assert_array_equal(rows, [[0.0, 3.0], [0.0, 0.0]])
            if x64:
                ids = jnp.array([2 ** 32 + 1, 0], jnp.int64)
                got = jax.jit(lambda i: ej.binary_csrmv_indexed(data, indices, indptr, None, (i, 2), shape=(2, 2),
                                                                transpose=True, backend=backend))(ids)
                np.testing.assert_array_equal(got, [1.0, 2.0])


class TestPerSynapseProductsDropBadColumns:
    """An entry whose column is outside ``[0, n)`` gives 0 and zero gradients, read by row or by column."""

    @pytest.mark.parametrize('backend', BACKENDS)
    @pytest.mark.parametrize('transpose', [False, True])
    def test_csrmv_dt2t_and_its_gradient(self, backend, transpose):
        w, indices, indptr = jnp.array([1.0, 2.0, 3.0]), jnp.array([0, 5, -1]), jnp.array([0, 2, 3])
        y = jnp.array([10.0, 100.0])
        f = jax.jit(lambda w, y, i: ej.csrmv_dt2t(y, w, i, indptr, shape=(2, 2), transpose=transpose,
                                                  backend=backend))
        out = f(w, y, indices)
        np.testing.assert_array_equal(out, [10.0, 0.0, 0.0])
        gw, gy = jax.grad(lambda w, y: f(w, y, indices).sum(), argnums=(0, 1))(w, y)
        np.testing.assert_array_equal(gw, [10.0, 0.0, 0.0])
        np.testing.assert_array_equal(gy, [1.0, 0.0])
        unchecked = ej.csrmv_dt2t(y, w, indices, indptr, shape=(2, 2), transpose=transpose, backend=backend,
                                  validate=False)
        np.testing.assert_array_equal(unchecked, out)

    @pytest.mark.parametrize('backend', BACKENDS)
    def test_fcnmv_dt2t_and_the_csr_container(self, backend):
        out = ej.fcnmv_dt2t(jnp.ones((2, 2)), jnp.array([[0, 5], [1, 1]]), jnp.array([10.0, 100.0]), shape=(2, 2),
                            validate=False, backend=backend)
        np.testing.assert_array_equal(out, [[10.0, 0.0], [100.0, 100.0]])
        A = ej.CSR((jnp.array([1.0, 2.0, 3.0]), jnp.array([0, 5, 1]), jnp.array([0, 2, 3])), shape=(2, 2),
                   validate=False)
        with ej.config.override(cpu=backend):
            np.testing.assert_array_equal(A.dt2t(jnp.array([10.0, 100.0])), [10.0, 0.0, 300.0])


class TestTinyFloat64Events:
    """Events of ``1e-300`` and ``1e-40`` are ``> 0``: they count on every backend, cpp included."""

    @pytest.mark.parametrize('backend', [*BACKENDS, 'cpp'])
    def test_tiny_events_count(self, backend):
        if backend not in _binary_csrmv.primitive.available_backends('cpu'):
            pytest.skip(f'{backend} is not available here')
        with jax.enable_x64(True):
            d, i, p = jnp.ones(2), jnp.array([0, 0]), jnp.array([0, 1, 2])
            events = jnp.array([1e-300, 1e-40])
            y = ej.binary_csrmv(d, i, p, events, shape=(2, 1), transpose=True, backend=backend)
            np.testing.assert_array_equal(y, [2.0])
            y = ej.binary_fcnmv(d.reshape(2, 1), i.reshape(2, 1), events, shape=(2, 1), transpose=True,
                                backend=backend)
            np.testing.assert_array_equal(y, [2.0])
            y = ej.binary_csrmv(jnp.ones(2), jnp.array([0, 1]), jnp.array([0, 2]), events, shape=(1, 2),
                                backend=backend)
            np.testing.assert_array_equal(y, [2.0])


class TestEntriesPastTheLastRow:
    """A CSR whose ``indptr[-1] < len(indices)`` is valid: its trailing entries belong to no row."""

    @pytest.mark.parametrize('backend', BACKENDS)
    def test_layout_and_with_delays_accept_it(self, backend):
        data, indices, indptr = np.array([1.0, 2.0, 3.0], np.float32), np.array([0, 1, 1]), np.array([0, 1, 1])
        delays = np.array([2, 1, 1])
        layout = ej.CSRDelayLayout.build(data, indices, indptr, delays, shape=(2, 2))
        assert layout.ring_length == 3
        A = ej.CSR((jnp.asarray(data), jnp.asarray(indices), jnp.asarray(indptr)), shape=(2, 2)).with_delays(delays)
        got = A.deliver(A.init_ring(), jnp.array([True, True]), 0, backend=backend)
        want = ej.csr_delay_deliver(jnp.zeros((3, 2)), jnp.array([True, True]), data, indices, indptr, delays, 0,
                                    shape=(2, 2), backend=backend)
        np.testing.assert_array_equal(got, want)
        np.testing.assert_array_equal(got, [[0.0, 0.0], [0.0, 0.0], [1.0, 0.0]])
