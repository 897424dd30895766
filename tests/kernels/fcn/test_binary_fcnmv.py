"""binary_fcnmv on every backend: values, batching, autodiff and bad indices against a dense NumPy reference."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from eventjax.kernels.fcn.binary_fcnmv import _binary_fcnmv, binary_fcnmv
from tests.kernels.conftest import backends_of
from tests.kernels.fcn.suite import BinaryFcnSuite


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
    """The transposed numba kernel prefetches event rows only for a matrix that stores ``PREFETCH_MIN_ENTRIES``
    (``tests/kernels/test_numba_large_scatters.py`` checks its results)."""

    def test_only_a_matrix_that_stores_enough_entries_gets_the_prefetching_kernel(self):
        pytest.importorskip('numba')
        from eventjax.kernels.common.numba.events import PREFETCH_MIN_ENTRIES
        from eventjax.kernels.fcn import numba_impl

        pick = numba_impl.binary_fcnmv_kernel(transpose=True, shape=(10, 10), outs=()).pick
        w = jax.ShapeDtypeStruct((1,), np.float32)
        s = jax.ShapeDtypeStruct((PREFETCH_MIN_ENTRIES // 4,), np.bool_)
        small = jax.ShapeDtypeStruct((PREFETCH_MIN_ENTRIES // 4 - 1, 4), np.int32)
        large = jax.ShapeDtypeStruct((PREFETCH_MIN_ENTRIES // 4, 4), np.int32)
        assert pick(w, small, s) is numba_impl._binary_mv_scatter
        assert pick(w, large, s) is numba_impl._binary_mv_scatter_prefetching
