"""The delay example runs, and its spike trains are the same on the CPU backends it compares."""

import importlib.util
import pathlib

SCRIPT = pathlib.Path(__file__).parent.parent / 'docs' / 'examples' / 'cuba_delays.py'


def _load():
    spec = importlib.util.spec_from_file_location('cuba_delays', SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_short_run_gives_identical_spike_trains_on_jax_and_numba(capsys):
    assert _load().main(['--duration', '20', '--backends', 'jax', 'numba', '--plot', '']) == 0
    assert 'same spike trains on jax, numba: True' in capsys.readouterr().out


def test_delays_are_drawn_from_one_to_five_ms():
    cuba = _load()
    (exc, inh), _ = cuba.make_network(0, 'uniform')
    for W in (exc, inh):
        d = W.delays
        assert int(d.min()) == 10 and int(d.max()) == 50 and W.ring_length == 51
