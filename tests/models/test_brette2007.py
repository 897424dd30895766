"""Brette's CUBA network replays NEST's spikes exactly from the stored export, and both networks run on every
CPU backend."""

import pathlib

import jax
import numpy as np
import pytest
from examples.brette2007 import model

DATA = pathlib.Path(model.__file__).parent / 'data' / 'cuba_nest.npz'


def nest_export():
    with np.load(DATA) as f:
        return {k: f[k] for k in f.files}


def replay_network(d):
    connections = ((d['src_e'].astype(np.int64), d['tgt_e'].astype(np.int64)),
                   (d['src_i'].astype(np.int64), d['tgt_i'].astype(np.int64)))
    return model.build('cuba', connections=connections, v0=d['v0'], stim_counts=d['stim_counts'])


def nest_raster(d, steps):
    out = np.zeros((steps, model.N), bool)
    keep = d['spike_steps'] < steps
    out[d['spike_steps'][keep], d['spike_senders'][keep]] = True
    return out


def test_the_export_holds_nest_s_network_and_at_least_a_second_of_identical_spikes():
    d = nest_export()
    assert str(d['nest_version']).startswith('3.10')
    assert d['src_e'].size == model.N * model.C_E and d['src_i'].size == model.N * model.C_I
    assert np.all(np.bincount(d['tgt_e'], minlength=model.N) == model.C_E)
    assert int(d['identical_steps']) * model.DT >= 1000
    assert np.max(np.abs(d['nest_v'] - d['eventjax_v'])) < 1e-9


@pytest.mark.parametrize(('backend', 't_sim'), [('numba', 1000.0), ('cpp', 500.0), ('jax', 200.0), ('warp', 200.0)])
def test_float64_cuba_gives_nest_s_spike_trains_and_potentials(backend, t_sim):
    d = nest_export()
    steps = int(round(t_sim / model.DT))
    record = int(d['record'])
    with jax.enable_x64(True):
        ours, v, _, _ = model.simulate('cuba', replay_network(d), t_sim, backend, np.float64, record=record)
    theirs = nest_raster(d, steps)
    assert theirs.sum() > 1000  # the network is active, not silent
    np.testing.assert_array_equal(ours, theirs)
    assert np.max(np.abs(v - d['nest_v'][:steps])) < 1e-9


def test_coba_and_float32_cuba_run_in_the_asynchronous_irregular_regime_on_numba():
    for name, low, high in (('cuba', 2.0, 10.0), ('coba', 8.0, 25.0)):
        net = model.build(name, seed=0, dtype=np.float32)
        spikes, _, _, _ = model.simulate(name, net, 300.0, 'numba', np.float32)
        rate_e, rate_i = model.rates(spikes[1000:], 200.0)  # after the stimulus and the first volley
        assert low < rate_e < high and low < rate_i < high, (name, rate_e, rate_i)


def test_propagators_match_nest_s_formulas():
    p = model.CubaParams()
    h = model.DT
    # away from the singularity propagator_32 is the closed form of the exponential current's effect
    exact = (p.tau_syn_ex * p.tau_m / (p.C_m * (p.tau_m - p.tau_syn_ex))
             * (np.exp(-h / p.tau_m) - np.exp(-h / p.tau_syn_ex)))
    assert model.propagator_32(p.tau_syn_ex, p.tau_m, p.C_m, h) == pytest.approx(exact, rel=1e-12)
    assert model.propagator_32(5.0, 5.0, 200.0, h) == pytest.approx(h / 200.0 * np.exp(-h / 5.0), rel=1e-15)
    assert model.refractory_steps(5.0) == 50 and model.refractory_steps(2.0) == 20
