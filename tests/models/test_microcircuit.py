"""PD14 at small scale: the connectivity has the reference's statistics and no N^2 array, the network fires at
plausible rates, and the CPU backends give the same spikes."""

import tracemalloc

import jax.numpy as jnp
import numba
import numpy as np
import pytest
from examples.microcircuit import network, simulation
from examples.microcircuit import params as P


def populations_of(ids, derived):
    return np.searchsorted(np.cumsum(derived.num_neurons), ids, side='right')


def test_derived_parameters_are_the_reference_s():
    full = P.derive(1.0, 1.0, 'dc')
    assert full.num_neurons.sum() == 77169
    # NEST counted 298,958,137 connections for the reference: these plus one per neuron to its spike recorder
    assert full.num_synapses.sum() + 77169 == 298_958_137
    assert full.weight_mean[0, 0] == pytest.approx(87.81, abs=0.01)  # 0.15 mV as a PSC (pA)
    assert full.weight_mean[0, 2] == pytest.approx(2 * full.weight_mean[0, 0])  # L4E -> L2/3E doubled
    assert full.weight_mean[3, 1] == pytest.approx(-4 * full.weight_mean[0, 0])
    assert full.dc_amp[0] == pytest.approx(8 * 1600 * full.weight_ext * 0.5e-3)
    scaled = P.derive(0.1, 0.1, 'dc')
    assert scaled.weight_ext == pytest.approx(full.weight_ext / np.sqrt(0.1))
    assert np.all(scaled.dc_amp < full.dc_amp)  # the compensation of the missing (net inhibitory) input


def rounded_truncated_mean(mean, sd):
    """The mean delay (ms) of a normal truncated below at half a step, rounded to steps (numerically)."""
    d = np.linspace(0.5 * P.DT, mean + 10 * sd, 2_000_001)
    density = np.exp(-0.5 * ((d - mean) / sd) ** 2)
    return float(np.sum(np.floor(d / P.DT + 0.5) * P.DT * density) / np.sum(density))


def test_connectivity_has_fixed_totals_kept_signs_and_rows_sorted_by_delay():
    derived = P.derive(0.05, 0.05, 'dc')
    conn = network.build_connectivity(derived, seed=1)
    rows = np.repeat(np.arange(derived.num_neurons.sum()), np.diff(conn.indptr))
    src, tgt = populations_of(rows, derived), populations_of(conn.indices, derived)
    totals = np.zeros((8, 8), np.int64)
    np.add.at(totals, (tgt, src), 1)
    np.testing.assert_array_equal(totals, derived.num_synapses)
    assert np.all(np.sign(conn.weights) == np.sign(derived.weight_mean[tgt, src]))
    assert np.all(conn.delays >= 1)
    assert np.all((np.diff(conn.delays) >= 0) | (np.diff(rows) != 0))
    exc = src % 2 == 0
    assert conn.delays[exc].mean() * P.DT == pytest.approx(rounded_truncated_mean(1.5, 0.75), abs=0.005)
    assert conn.delays[~exc].mean() * P.DT == pytest.approx(rounded_truncated_mean(0.75, 0.375), abs=0.005)
    rel = conn.weights / derived.weight_mean[tgt, src]
    assert rel.std() == pytest.approx(0.1, abs=0.005)


def test_the_network_depends_on_the_seed_alone_not_on_the_thread_count():
    derived = P.derive(0.02, 0.05, 'dc')
    threads = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = network.build_connectivity(derived, seed=4)
    finally:
        numba.set_num_threads(threads)
    many = network.build_connectivity(derived, seed=4)
    np.testing.assert_array_equal(one.offsets, many.offsets)
    np.testing.assert_array_equal(one.weights, many.weights)
    assert many.max_delay == many.delays.max()
    assert not np.array_equal(network.build_connectivity(derived, seed=5).weights[:100], many.weights[:100])
    # aligned, so that JAX aliases the arrays instead of copying them
    assert many.offsets.ctypes.data % 64 == 0 and many.weights.ctypes.data % 64 == 0


def test_building_the_connectivity_allocates_far_less_than_an_n_by_n_array():
    derived = P.derive(0.1, 0.01, 'dc')  # 7,717 neurons, ~300,000 synapses
    n = int(derived.num_neurons.sum())
    tracemalloc.start()
    try:
        network.build_connectivity(derived, seed=2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < n * n // 2  # an N x N boolean array alone would be n * n bytes


def run(scale, drive, backend, t_presim, t_sim, seed=5):
    model = simulation.build(scale, None, drive, seed, np.float32)
    runner = simulation.Runner(model, backend, seed)
    runner.run(t_presim, progress=None, record=False)
    steps, ids, _ = runner.run(t_sim, progress=None)
    return model, steps, ids


def test_poisson_driven_pd14_fires_at_plausible_rates_per_population():
    model, _, ids = run(0.05, 'poisson', 'numba', 100.0, 200.0)
    rates = simulation.population_rates(model, ids, 200.0)
    assert np.all((rates > 0.05) & (rates < 25.0)), rates
    # the model's signature: L2/3E and L6E the quietest excitatory populations, L5 the most active
    assert rates[0] < rates[2] and rates[6] < rates[4], rates


@pytest.mark.parametrize('backend', ['jax', 'warp'])
def test_backends_give_numba_s_spikes(backend):
    _, steps, ids = run(0.02, 'poisson', 'numba', 0.0, 100.0)
    _, steps_b, ids_b = run(0.02, 'poisson', backend, 0.0, 100.0)
    assert ids.size > 100
    np.testing.assert_array_equal(steps, steps_b)
    np.testing.assert_array_equal(ids, ids_b)


def test_poisson_thresholds_give_the_poisson_law():
    (th,) = simulation.poisson_thresholds([1.6])
    u = np.random.default_rng(0).integers(0, 2 ** 32, 1_000_000, dtype=np.uint64)
    k = (u[:, None] >= np.array(th, np.uint64)[None]).sum(axis=1)
    assert k.mean() == pytest.approx(1.6, abs=0.01) and k.var() == pytest.approx(1.6, abs=0.02)
    assert np.mean(k == 0) == pytest.approx(np.exp(-1.6), abs=0.002)


@pytest.mark.parametrize('drive', ['dc', 'poisson'])
def test_a_step_updates_the_ring_in_place_without_copying_it(drive):
    model = simulation.build(0.02, 0.1, drive, 3, np.float32)
    runner = simulation.Runner(model, 'numba', 3)
    text = runner._chunk.lower(runner.state, runner.args, jnp.int32(0), 10).compile().as_text()
    ring = f'f32[{model.W.ring_length},{model.n}]'
    assert ring in text
    assert not [line for line in text.splitlines() if ' copy(' in line and ring in line]
