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
