"""A JITC product at 1,000,000 x 1,000,000 (prob 0.001) runs in O(n) memory and events x k time."""

import resource
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.jitc.binary_jitcmv import _binary_jitcmv
from tests.kernels.conftest import backends_of

N = 1_000_000


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


@pytest.mark.skipif('numba' not in backends_of(_binary_jitcmv.primitive), reason='numba runs on the cpu only')
def test_an_event_product_at_a_million_neurons_needs_o_n_memory():
    # 10**9 connections would take 8 GB as CSR; the product must not come near that.
    A = ej.JITCMatrix(1.0, prob=0.001, seed=0, shape=(N, N), backend='numba')
    spikes = jnp.zeros(N, bool).at[jnp.arange(0, N, N // 20)].set(True)
    small = ej.JITCMatrix(1.0, prob=0.001, seed=0, shape=(4000, 4000), backend='numba')
    jax.block_until_ready(ej.EventArray(spikes[:4000]) @ small)  # compile outside the measurement
    before = peak_rss_mb()
    start = time.perf_counter()
    out = jax.block_until_ready(ej.EventArray(spikes) @ A)
    elapsed = time.perf_counter() - start
    grown = peak_rss_mb() - before
    assert out.shape == (N,)
    # 20 events x ~1000 connections each, every one of weight 1.
    assert 15_000 < float(out.sum()) < 25_000
    assert grown < 100, f'peak RSS grew by {grown:.0f} MB'
    assert elapsed < 5, f'the event product took {elapsed:.1f} s; it should cost events x connections'
    np.testing.assert_array_equal(out, A.T @ ej.EventArray(spikes))
