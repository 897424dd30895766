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
        # Every index is out of range, so a kernel that read any row without an
        # event would report it: only the event rows are visited.
        if 'numba' not in backends_of(_binary_fcnmv.primitive):
            pytest.skip('numba runs on the cpu only')
        indices = jnp.full((50, 4), 99, jnp.int32)
        spikes = jnp.zeros(50, bool)
        got = binary_fcnmv(1.0, indices, spikes, shape=(50, 10), transpose=True, backend='numba')
        np.testing.assert_array_equal(got, np.zeros(10))
        with pytest.raises(Exception, match='index 99 in row 7'):
            jax.block_until_ready(binary_fcnmv(1.0, indices, spikes.at[7].set(True), shape=(50, 10),
                                               transpose=True, backend='numba'))
