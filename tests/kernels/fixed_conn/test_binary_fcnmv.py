"""binary_fcnmv on every backend: values, batching, autodiff and bad indices against a dense NumPy reference."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from eventjax.kernels.fixed_conn.binary_fcnmv import _binary_fcnmv, binary_fcnmv
from tests.kernels.conftest import backends_of
from tests.kernels.fixed_conn.suite import BinaryFcnSuite


class TestBinaryFcnmv(BinaryFcnSuite):
    fn = staticmethod(binary_fcnmv)
    prim = _binary_fcnmv.primitive
    events = True
    matrix = False
    mm_name = 'binary_fcnmm'

    def test_the_numba_event_scatter_visits_only_the_rows_with_events(self):
        # Every index is out of range and dropped (traced, so unchecked): the
        # result is zeros whether or not a row has an event.
        if 'numba' not in backends_of(_binary_fcnmv.primitive):
            pytest.skip('numba runs on the cpu only')
        indices = jnp.full((50, 4), 99, jnp.int32)
        spikes = jnp.zeros(50, bool)
        f = jax.jit(lambda i, s: binary_fcnmv(1.0, i, s, shape=(50, 10), transpose=True, backend='numba'))
        np.testing.assert_array_equal(f(indices, spikes), np.zeros(10))
        np.testing.assert_array_equal(f(indices, spikes.at[7].set(True)), np.zeros(10))
        good = indices.at[7].set(jnp.array([1, 1, 2, 3]))
        np.testing.assert_array_equal(f(good, spikes.at[7].set(True)), [0, 2, 1, 1, 0, 0, 0, 0, 0, 0])


class TestNumbaPrefetchingScatter:
    """The transposed numba kernel prefetches event rows only for a matrix that stores ``PREFETCH_MIN_ENTRIES``."""

    def test_only_a_matrix_that_stores_enough_entries_gets_the_prefetching_kernel(self):
        pytest.importorskip('numba')
        from eventjax.kernels.common.numba.events import PREFETCH_MIN_ENTRIES
        from eventjax.kernels.fixed_conn import numba_impl

        pick = numba_impl.binary_fcnmv_kernel(transpose=True, shape=(10, 10), outs=()).pick
        w = jax.ShapeDtypeStruct((1,), np.float32)
        s = jax.ShapeDtypeStruct((PREFETCH_MIN_ENTRIES // 4,), np.bool_)
        small = jax.ShapeDtypeStruct((PREFETCH_MIN_ENTRIES // 4 - 1, 4), np.int32)
        large = jax.ShapeDtypeStruct((PREFETCH_MIN_ENTRIES // 4, 4), np.int32)
        assert pick(w, small, s) is numba_impl._binary_mv_scatter
        assert pick(w, large, s) is numba_impl._binary_mv_scatter_prefetching

    @pytest.mark.parametrize('homogeneous', [False, True])
    def test_the_prefetching_kernel_matches_numpy(self, homogeneous):
        pytest.importorskip('numba')
        from eventjax.kernels.common.numba.events import PREFETCH_MIN_ENTRIES, ROWS_AHEAD
        from eventjax.kernels.fixed_conn import numba_impl

        k, n = 50, 300
        m = PREFETCH_MIN_ENTRIES // k + 3
        rng = np.random.default_rng(6)
        indices = rng.integers(0, n, (m, k), dtype=np.int32)
        indices[::97, 3] = -4  # dropped: negative
        indices[1::89, 7] = n + 2  # dropped: past the last column
        weights = np.full((1, 1), 0.5, np.float32) if homogeneous else rng.standard_normal((m, k), dtype=np.float32)
        rows = [0, 1, 2 * ROWS_AHEAD + 1, 777, m // 2, m - 2, m - 1]
        spikes = np.zeros(m, np.bool_)
        spikes[rows] = True
        out = np.full(n, np.nan, np.float32)
        numba_impl._binary_mv_scatter_prefetching(weights, indices, spikes, out, np.zeros(8, np.uint8))
        want = np.zeros(n)
        for i in rows:
            j = indices[i]
            w = np.broadcast_to(weights.reshape(-1), (m * k,))[i * k:(i + 1) * k].astype(np.float64)
            ok = (j >= 0) & (j < n)
            np.add.at(want, j[ok], w[ok])
        np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-5)
