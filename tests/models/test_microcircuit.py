"""PD14 at small scale: the connectivity has the reference's statistics and no N^2 array, the network fires at
plausible rates, and the CPU backends give the same spikes."""

import functools
import pathlib
import subprocess
import sys
import tracemalloc

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from examples.microcircuit import network, neurons, owner_split, simulation
from examples.microcircuit import params as P

import eventjax as ej
from eventjax.backends import numba as numba_backend

ROOT = pathlib.Path(__file__).resolve().parents[2]  # examples/ is imported from the repository root


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
    # two parts per row (columns below split_column, then the rest), each sorted by delay
    second = np.arange(conn.nnz) >= conn.splits[rows]
    assert 0 < conn.split_column < conn.n
    np.testing.assert_array_equal(second, conn.indices >= conn.split_column)
    assert np.all((np.diff(conn.delays) >= 0) | (np.diff(rows) != 0) | (np.diff(second) != 0))
    assert 0.4 < second.mean() < 0.6
    exc = src % 2 == 0
    assert conn.delays[exc].mean() * P.DT == pytest.approx(rounded_truncated_mean(1.5, 0.75), abs=0.005)
    assert conn.delays[~exc].mean() * P.DT == pytest.approx(rounded_truncated_mean(0.75, 0.375), abs=0.005)
    rel = conn.weights / derived.weight_mean[tgt, src]
    assert rel.std() == pytest.approx(0.1, abs=0.005)


def test_the_network_depends_on_the_seed_alone_not_on_the_thread_count():
    derived = P.derive(0.02, 0.05, 'dc')
    threads = numba_backend.requested_num_threads()
    try:
        numba_backend.set_num_threads(1)
        one = network.build_connectivity(derived, seed=4)
    finally:
        numba_backend.set_num_threads(threads)
    many = network.build_connectivity(derived, seed=4)
    np.testing.assert_array_equal(one.offsets, many.offsets)
    np.testing.assert_array_equal(one.weights, many.weights)
    assert many.max_delay == many.delays.max()
    assert not np.array_equal(network.build_connectivity(derived, seed=5).weights[:100], many.weights[:100])
    # aligned, so that JAX aliases the arrays instead of copying them
    assert many.offsets.ctypes.data % 64 == 0 and many.weights.ctypes.data % 64 == 0


def layer_of_a_fresh_process(code):
    """numba's threading layer in a new Python process after ``code`` (the layer is fixed once per process)."""
    out = subprocess.run([sys.executable, '-c', code + '\nimport numba\nprint(numba.threading_layer())'],
                         capture_output=True, text=True, check=True, cwd=ROOT)
    return out.stdout.split()[-1]


def test_the_network_s_kernels_run_on_the_library_s_threading_layer():
    # numba's own pick (OpenMP here) spin-waits: a delivery on a loaded machine waited milliseconds a step
    built = layer_of_a_fresh_process('from examples.microcircuit import network, owner_split, params\n'
                                     "c = network.build_connectivity(params.derive(0.01, 0.01, 'dc'))\n"
                                     'owner_split.check_splits(c.indptr, c.offsets, c.splits, c.split_column, c.n)')
    chosen = layer_of_a_fresh_process('from eventjax.backends.numba import threading_layer\nthreading_layer()')
    assert built == chosen


def test_building_the_connectivity_allocates_far_less_than_an_n_by_n_array():
    derived = P.derive(0.1, 0.01, 'dc')  # 7,717 neurons, ~300,000 synapses
    n = int(derived.num_neurons.sum())
    # numba compiling the kernel (tens of MB of Python objects) is not the build's; a small build compiles it first
    network.build_connectivity(P.derive(0.01, 0.01, 'dc'), seed=2)
    tracemalloc.start()
    try:
        network.build_connectivity(derived, seed=2)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < n * n // 2  # an N x N boolean array alone would be n * n bytes


@functools.cache
def run(scale, drive, backend, t_presim, t_sim, seed=5, column_multiple=1):
    # Several tests compare against the same run (numba's, jax's): each is built and run once, read-only.
    model = simulation.build(scale, None, drive, seed, np.float32, column_multiple=column_multiple)
    runner = simulation.Runner(model, backend, seed)
    runner.run(t_presim, progress=None, record=False)
    steps, ids, _ = runner.run(t_sim, progress=None)
    for a in (steps, ids):
        a.setflags(write=False)
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


def test_a_ring_of_whole_128_column_rows_gives_the_same_spikes():
    """The pallas TPU path's ring, ``n`` rounded up to 128 columns: the extra targets receive nothing."""
    _, steps, ids = run(0.02, 'poisson', 'jax', 0.0, 100.0)
    model, steps_b, ids_b = run(0.02, 'poisson', 'jax', 0.0, 100.0, column_multiple=128)
    assert model.W.shape[1] % 128 == 0 and model.W.shape[1] > model.n and ids.size > 50
    np.testing.assert_array_equal(steps, steps_b)
    np.testing.assert_array_equal(ids, ids_b)


def test_poisson_thresholds_give_the_poisson_law():
    (th,) = simulation.poisson_thresholds([1.6])
    u = np.random.default_rng(0).integers(0, 2 ** 32, 1_000_000, dtype=np.uint64)
    k = (u[:, None] >= np.array(th, np.uint64)[None]).sum(axis=1)
    assert k.mean() == pytest.approx(1.6, abs=0.01) and k.var() == pytest.approx(1.6, abs=0.02)
    assert np.mean(k == 0) == pytest.approx(np.exp(-1.6), abs=0.002)


@pytest.mark.parametrize('backend', ['numba', 'jax'])
@pytest.mark.parametrize('drive', ['dc', 'poisson'])
def test_a_step_updates_the_ring_in_place_without_copying_it(drive, backend):
    model = simulation.build(0.02, 0.1, drive, 3, np.float32)
    runner = simulation.Runner(model, backend, 3)
    text = runner._chunk.lower(runner.state, runner.args, jnp.int32(0), 10).compile().as_text()
    # numba delivers at read time: the state holds the input and the last steps' spiking rows, not a ring
    shapes = [f's32[{model.W.ring_length},{model.n}]', f'f32[1,{model.n}]'] if backend == 'numba' else \
        [f'f32[{model.W.ring_length},{model.n}]']
    for shape in shapes:
        assert shape in text
        assert not [line for line in text.splitlines() if ' copy(' in line and shape in line]


def test_the_split_rows_are_the_delay_sorted_rows_stably_partitioned():
    derived = P.derive(0.02, 0.05, 'dc')
    split, whole = network.build_connectivity(derived, seed=4), network.build_connectivity(derived, seed=4,
                                                                                         split=False)
    np.testing.assert_array_equal(whole.splits, whole.indptr[1:])
    rows = np.repeat(np.arange(whole.n), np.diff(whole.indptr))
    order = np.lexsort((whole.indices >= split.split_column, rows), axis=0)  # stable: delay order kept per part
    np.testing.assert_array_equal(split.offsets, whole.offsets[order])
    np.testing.assert_array_equal(split.weights, whole.weights[order])


def split_layout(rng, m, n, per_row, length):
    """A random structure stored in two parts at column n // 2 (multapses included), and its one-part twin."""
    rows = np.repeat(np.arange(m), per_row)
    cols = rng.integers(0, n, rows.size)
    cols[1::7] = cols[::7][:cols[1::7].size]  # repeated (column, delay) pairs: their order must hold
    delays = rng.integers(1, length, rows.size)
    delays[1::7] = delays[::7][:delays[1::7].size]
    weights = rng.normal(size=rows.size).astype(np.float32)
    indptr = np.arange(0, rows.size + 1, per_row)
    whole = np.lexsort((delays, rows))
    split = np.lexsort((delays, cols >= n // 2, rows))
    lay = lambda o: ej.DelayedCSR(ej.CSRDelayLayout(  # noqa: E731
        jnp.asarray(weights[o]), None, jnp.asarray(indptr.astype(np.int32)), None,
        jnp.asarray((delays[o] * n + cols[o]).astype(np.int32)), shape=(m, n), ring_length=length))
    splits = indptr[:-1] + np.add.reduceat(cols < n // 2, indptr[:-1])
    return lay(split), lay(whole), splits


@pytest.mark.parametrize('rate', [0.002, 0.3])  # few events (one thread) and many (both threads)
def test_owner_split_delivery_is_the_one_thread_delivery_bit_for_bit(rate):
    rng = np.random.default_rng(7)
    m, n, length = 400, 300, 9
    W_split, W_whole, splits = split_layout(rng, m, n, 200, length)
    owner_split.check_splits(W_split.indptr, W_split.layout.offsets, splits, n // 2, n)
    ring_a = ring_b = ring_c = W_split.init_ring(length + 2)  # a ring longer than the layout needs
    for t in range(12):
        spikes = jnp.asarray(rng.random(m) < rate)
        ring_a = owner_split.owner_split_deliver(ring_a, spikes, W_split, jnp.asarray(splits, jnp.int32), t)
        ring_b = W_whole.deliver(ring_b, spikes, t, backend='numba')
        ring_c = owner_split.owner_split_deliver(ring_c, spikes, W_split, jnp.asarray(splits, jnp.int32), t,
                                                 backend='jax')
    assert np.any(np.asarray(ring_a) != 0)
    np.testing.assert_array_equal(np.asarray(ring_a), np.asarray(ring_b))
    np.testing.assert_allclose(np.asarray(ring_c), np.asarray(ring_b), rtol=1e-5, atol=1e-5)


def test_check_splits_refuses_a_synapse_on_the_wrong_side():
    rng = np.random.default_rng(8)
    W_split, W_whole, splits = split_layout(rng, 20, 30, 10, 5)
    with pytest.raises(ValueError, match='wrong side of column 15'):
        owner_split.check_splits(W_whole.indptr, W_whole.layout.offsets, splits, 15, 30)
    with pytest.raises(ValueError, match='within its row'):
        owner_split.check_splits(W_split.indptr, W_split.layout.offsets, splits + 11, 15, 30)


def test_the_owner_split_network_spikes_as_the_one_part_network():
    out = []
    for split in (True, False):
        model = simulation.build(0.05, 0.2, 'dc', 3, np.float32, split=split)
        runner = simulation.Runner(model, 'numba', 3)
        out.append((*runner.run(50.0, progress=None)[:2], np.asarray(runner.state[0])))
    assert out[0][1].size > 200
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize('shape', [(3, 77), (100, 64), (1, 5), (0, 9), (2, 0), (7, 77169)])
def test_raster_nonzero_is_np_nonzero(shape):
    raster = np.random.default_rng(shape[1]).random(shape) < 0.05
    raster[..., -1:] = True  # the flags past the last whole word
    rows, ids = simulation.raster_nonzero(raster)
    want_rows, want_ids = np.nonzero(raster)
    np.testing.assert_array_equal(rows, want_rows)
    np.testing.assert_array_equal(ids, want_ids)


def numpy_update(v, i_syn, r, ring, drive, extra, t, p22, p21, p11, theta, v_reset, ref):
    """The update in NumPy float32, each operation rounded in NEST's order."""
    f = np.float32
    v, i_syn, r, ring = v.copy(), i_syn.copy(), r.copy(), ring.copy()
    slot = t % ring.shape[0]
    inp = ring[slot] + extra if extra.size else ring[slot].copy()
    ring[slot] = 0
    free = r == 0
    v[free] = v[free] * f(p22) + i_syn[free] * f(p21) + drive[free]
    r[~free] -= 1
    i_syn = i_syn * f(p11) + inp
    with np.errstate(invalid='ignore'):
        spikes = (v >= f(theta)) & (i_syn == i_syn)
    v[spikes], r[spikes] = f(v_reset), ref
    return v, i_syn, r, ring, spikes


@pytest.mark.parametrize('poisson', [False, True])
def test_the_numba_neuron_update_is_numpy_s_bit_for_bit_and_xla_s_to_an_ulp(poisson):
    rng = np.random.default_rng(9)
    n, length = 1001, 7
    v = rng.normal(10.0, 6.0, n).astype(np.float32)
    i_syn = rng.normal(0.0, 300.0, n).astype(np.float32)
    i_syn[5] = np.nan  # a broken current never fires
    v[5] = 20.0
    r = (rng.integers(0, 3, n) * (rng.random(n) < 0.3)).astype(np.int32)
    ring = rng.normal(0.0, 50.0, (length, n)).astype(np.float32)
    drive = rng.normal(0.5, 0.1, n).astype(np.float32)
    extra = rng.normal(0.0, 80.0, n).astype(np.float32) if poisson else np.zeros(0, np.float32)
    constants = dict(p22=0.99004983, p21=0.0951, p11=0.81873075, theta=15.0, v_reset=0.0, ref=20)
    want = (v, i_syn, r, ring)
    for t in (3, 4):
        *want, spikes = numpy_update(*want, drive, extra, t, **constants)
    want.append(spikes)
    out = {}
    for backend in ('numba', 'jax'):
        state = tuple(jnp.asarray(x) for x in (v, i_syn, r, ring))
        for t in (3, 4):
            state, spikes = neurons.update(state, jnp.asarray(drive), jnp.asarray(extra), t, constants, backend)
        out[backend] = [np.asarray(x) for x in (*state, spikes)]
    assert 0 < want[4].sum() < n and not want[4][5]
    assert np.all(out['numba'][3][3:5] == 0) and np.all(out['numba'][3][5] == ring[5])
    for a, b, c in zip(out['numba'], want, out['jax']):
        np.testing.assert_array_equal(a, b)
        np.testing.assert_allclose(c, b, rtol=1e-5, atol=1e-4)


@pytest.mark.parametrize('backend', ['numba', 'jax'])
@pytest.mark.parametrize('n', [1, 31, 64, 1001])
def test_the_packed_update_gives_the_spikes_as_bitpack_s_words(backend, n):
    rng = np.random.default_rng(n)
    v = rng.normal(14.0, 3.0, n).astype(np.float32)
    v[0] = 16.0  # at least one spike
    ring = rng.normal(0.0, 50.0, (3, n)).astype(np.float32)
    constants = dict(p22=0.99, p21=0.0951, p11=0.82, theta=15.0, v_reset=0.0, ref=20)
    drive, extra = jnp.full(n, 0.5, jnp.float32), jnp.zeros(0, jnp.float32)
    fresh = lambda: (jnp.asarray(v), jnp.zeros(n), jnp.zeros(n, jnp.int32), jnp.asarray(ring))  # noqa: E731
    step = jax.jit(lambda s, t: neurons.update(s, drive, extra, t, constants, backend, packed=True))
    state, spikes, words = step(fresh(), 2)
    plain_state, plain_spikes = neurons.update(fresh(), drive, extra, 2, constants, backend)
    spikes = np.asarray(spikes)
    np.testing.assert_array_equal(spikes, np.asarray(plain_spikes))
    for a, b in zip(state, plain_state):
        np.testing.assert_array_equal(np.asarray(a), np.asarray(b))
    assert words.dtype == jnp.uint32 and words.shape == (-(-n // 32),)
    assert spikes[0] and (n < 32 or spikes.sum() < n)
    bits = np.unpackbits(np.asarray(words).view(np.uint8), bitorder='little')
    np.testing.assert_array_equal(bits[:n], spikes)
    assert not bits[n:].any()  # the last word's padding stays 0
