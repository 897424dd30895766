"""docs/examples/cuba_stdp.py runs: STDP on CUBA's excitatory synapses changes them in bounds, alike on jax and numba."""

import importlib.util
import pathlib

import numpy as np

SCRIPT = pathlib.Path(__file__).parent.parent / 'docs' / 'examples' / 'cuba_stdp.py'


def _load():
    spec = importlib.util.spec_from_file_location('cuba_stdp', SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_short_run_reports_both_step_times_and_learns_within_bounds(capsys):
    example = _load()
    results = example.main(['--duration', '5', '--backends', 'numba'])
    out = capsys.readouterr().out
    assert 'without learning' in out and 'with    learning' in out and 'learning costs' in out
    (static_us, w_static), (plastic_us, w_plastic) = results['numba', False], results['numba', True]
    assert static_us > 0 and plastic_us > 0
    np.testing.assert_array_equal(w_static, np.float32(example.cuba.W_E))  # without learning nothing moves
    moved = w_plastic != np.float32(example.cuba.W_E)
    assert 0 < moved.mean() < 0.5  # only the synapses of neurons that fired
    assert w_plastic.min() >= 0 and w_plastic.max() <= example.W_MAX


def test_jax_and_numba_learn_the_same_weights():
    example = _load()
    exc, inh, v0 = example.make_network(0)
    _, w_numba, _ = example.simulate(exc, inh, v0, 30, 'numba', learn=True)
    _, w_jax, _ = example.simulate(exc, inh, v0, 30, 'jax', learn=True)
    assert (w_numba != np.float32(example.cuba.W_E)).any()
    np.testing.assert_allclose(w_numba, w_jax, rtol=1e-6, atol=1e-6)
