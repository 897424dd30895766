"""The delay example runs, and its spike trains are the same on the CPU backends it compares."""

import importlib.util
import pathlib

import numpy as np

SCRIPT = pathlib.Path(__file__).parent.parent / 'docs' / 'examples' / 'cuba_delays.py'


def _load():
    spec = importlib.util.spec_from_file_location('cuba_delays', SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_short_run_gives_identical_spike_trains_on_jax_and_numba(capsys):
    assert _load().main(['--duration', '20', '--backends', 'jax', 'numba', '--plot', '']) == 0
    assert 'same spike trains on jax, numba: True' in capsys.readouterr().out


def test_delays_are_drawn_from_one_to_five_ms_on_the_connections_of_the_one_step_network():
    networks, _ = _load().make_network(0)
    for W, one in zip(networks['uniform'], networks['one step']):
        d = W.delays
        assert int(d.min()) == 10 and int(d.max()) == 50 and W.ring_length == 51
        assert int(one.delays.max()) == 1 and one.ring_length == 2
        np.testing.assert_array_equal(W.indptr, one.indptr)
        rows = np.repeat(np.arange(W.shape[0]), np.diff(np.asarray(W.indptr)))
        assert sorted(zip(rows, np.asarray(W.indices))) == sorted(zip(rows, np.asarray(one.indices)))
