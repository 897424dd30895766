"""The pallas delivery kernel (interpret mode on the cpu) against the dense NumPy oracle."""

import jax
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.delay.csr_delay_deliver import _csr_delay_deliver
from eventjax.kernels.delay.layout import _csr_delay_deliver_layout
from tests.kernels.delay import oracle


@pytest.fixture(autouse=True)
def _delivery_registered():
    _csr_delay_deliver.register('pallas')  # the folder's fixture has interpret mode on and restores the tables
    _csr_delay_deliver_layout.register('pallas')


@pytest.mark.parametrize('homogeneous', [False, True])
def test_binary_and_weighted_delivery_match_numpy(homogeneous):
    ring, data, indices, indptr, delays = oracle.problem(21, homogeneous=homogeneous, shared_delay=homogeneous)
    spikes = np.array([True, False, True, True, False, False, True])
    graded = np.array([0.5, 0.0, -2.0, 1.0, 0.0, 3.0, 0.0], np.float32)
    for events, weighted in ((spikes, False), (graded, True)):
        for t in (0, -3):
            got = ej.csr_delay_deliver(ring, events, data, indices, indptr, delays, t, shape=(7, 5),
                                       weighted=weighted, backend='pallas')
            np.testing.assert_allclose(got, oracle.deliver(ring, events, data, indices, indptr, delays, t,
                                                           weighted=weighted), rtol=1e-5, atol=1e-6)


def test_out_of_range_delays_and_columns_are_dropped_under_jit():
    ring, data, indices, indptr, delays = oracle.problem(22)
    delays, indices = delays.copy(), indices.copy()
    delays[::3], indices[1::4] = 7, 9
    spikes = np.ones(7, bool)
    got = jax.jit(lambda d, i: ej.csr_delay_deliver(ring, spikes, data, i, indptr, d, 1, shape=(7, 5),
                                                    backend='pallas'))(delays, indices)
    np.testing.assert_allclose(got, oracle.deliver(ring, spikes, data, indices, indptr, delays, 1, weighted=False),
                               rtol=1e-5, atol=1e-6)


def test_the_layout_delivery_matches_numpy_and_drops_what_a_traced_build_marks():
    ring, data, indices, indptr, delays = oracle.problem(23, homogeneous=True)
    lay = ej.CSRDelayLayout.build(data, indices, indptr, delays, shape=(7, 5))
    graded = np.array([0.5, 0.0, -2.0, 1.0, 0.0, 3.0, 0.0], np.float32)
    for events, weighted in ((graded > 0, False), (graded, True)):
        for t in (1, -6):
            got = ej.csr_delay_deliver_layout(ring, events, lay, t, weighted=weighted, backend='pallas')
            np.testing.assert_allclose(got, oracle.deliver(ring, events, data, indices, indptr, delays, t,
                                                           weighted=weighted), rtol=1e-5, atol=1e-6)
    delays, indices = delays.copy(), indices.copy()
    delays[::3], indices[1::4] = 7, -1
    got = jax.jit(lambda d, i: ej.csr_delay_deliver_layout(
        ring, graded, ej.CSRDelayLayout.build(data, i, indptr, d, shape=(7, 5)), 2, backend='pallas'))(delays, indices)
    np.testing.assert_allclose(got, oracle.deliver(ring, graded, data, indices, indptr, delays, 2, weighted=False),
                               rtol=1e-5, atol=1e-6)
