"""fcn_delay_deliver's argument checks: shapes that flatten to the right length but pair values with other synapses."""

import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.delay.csr_delay_deliver import _csr_delay_deliver
from tests.kernels.delay import oracle

INDICES = np.array([[0, 1], [1, 2], [2, 0]])  # (m, k) = (3, 2)
DELAYS = np.array([[1, 2], [1, 1], [2, 1]])
SPIKES = np.array([True, False, True])


def _call(weights=1.0, indices=INDICES, delays=DELAYS, backend=None, **kw):
    return ej.fcn_delay_deliver(jnp.zeros((3, 3)), SPIKES, weights, indices, delays, 0, shape=(3, 3),
                                backend=backend, **kw)


class TestShapes:
    prim = _csr_delay_deliver.primitive

    def test_per_synapse_weights_and_delays_deliver_as_the_csr_form(self, backend):
        weights = np.arange(1, 7, dtype=np.float32).reshape(3, 2)
        got = _call(weights, backend=backend)
        want = oracle.deliver(np.zeros((3, 3)), SPIKES, weights.reshape(-1), INDICES.reshape(-1),
                              np.arange(4) * 2, DELAYS.reshape(-1), 0, weighted=False)
        np.testing.assert_allclose(got, want, rtol=1e-6)

    @pytest.mark.parametrize('shape', [(2, 3), (6,)])
    def test_weights_of_another_shape_with_the_right_size_are_refused(self, shape):
        with pytest.raises(ValueError, match=r'weights must have shape \(3, 2\)'):
            _call(np.ones(shape, np.float32))

    @pytest.mark.parametrize('shape', [(2, 3), (6,)])
    def test_delays_of_another_shape_with_the_right_size_are_refused(self, shape):
        with pytest.raises(ValueError, match=r'delays must have shape \(3, 2\)'):
            _call(delays=np.ones(shape, int))

    def test_an_index_outside_the_columns_is_named_by_row_and_slot(self):
        with pytest.raises(ValueError, match=r'indices\[1, 1\] = 7 is outside \[0, 3\)'):
            _call(indices=np.array([[0, 1], [1, 7], [2, 0]]))

    def test_shared_weight_and_delay_and_zero_connections_per_row(self, backend):
        got = _call(2.0, delays=1, backend=backend)
        want = oracle.deliver(np.zeros((3, 3)), SPIKES, np.full(6, 2.0), INDICES.reshape(-1), np.arange(4) * 2,
                              np.ones(6, int), 0, weighted=False)
        np.testing.assert_allclose(got, want, rtol=1e-6)
        empty = _call(np.zeros((3, 0), np.float32), indices=np.zeros((3, 0), int), delays=np.zeros((3, 0), int),
                      backend=backend)
        np.testing.assert_array_equal(empty, np.zeros((3, 3)))
