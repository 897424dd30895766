"""docs/examples/cuba_stdp.py runs: STDP on CUBA's excitatory synapses stays in bounds, in place."""

import numpy as np

from tests.examples import load_example


def test_a_short_run_reports_both_step_times_and_learns_within_bounds(capsys):
    example = load_example('cuba_stdp')
    results = example.main(['--duration', '5', '--backends', 'numba'])
    out = capsys.readouterr().out
    assert 'without learning' in out and 'with    learning' in out and 'learning costs' in out
    (static_us, w_static), (plastic_us, w_plastic) = results['numba', False], results['numba', True]
    assert static_us > 0 and plastic_us > 0
    np.testing.assert_array_equal(w_static, np.float32(example.cuba.W_E))  # without learning nothing moves
    moved = w_plastic != np.float32(example.cuba.W_E)
    assert 0 < moved.mean() < 0.5  # only the synapses of neurons that fired
    assert w_plastic.min() >= 0 and w_plastic.max() <= example.W_MAX


def test_the_learning_step_copies_no_weights():
    """Updated in place in the scan's carry: the compiled run holds no copy of the 255,000 weights."""
    example = load_example('cuba_stdp')
    exc, inh, v0 = example.make_network(0)
    text = example.make_run(exc, inh, 3, 'numba', learn=True).lower(exc[0], v0).compile().as_text()
    weights = f'f32[{exc[0].shape[0]}]'
    assert weights in text
    assert not [line for line in text.splitlines() if ' copy(' in line and weights in line]
