"""docs/examples/stdp.py: additive STDP makes the weights bimodal at a steady output rate (Song et al. 2000)."""

import numpy as np
import pytest

from tests.examples import load_example


@pytest.fixture(scope='module')
def trained_at_40_hz():
    # The paper's parameters (A+ = 0.005, A-/A+ = 1.05, tau 20 ms, g_max 0.015) at 40 Hz inputs, the top of its
    # range, where the split is fastest: 600 s of simulated time, a few seconds of CPU.
    stdp = load_example('stdp')
    assert (stdp.A_PLUS, stdp.RATIO, stdp.TAU_PLUS, stdp.TAU_MINUS, stdp.G_MAX) == (0.005, 1.05, 20.0, 20.0, 0.015)
    return stdp, stdp.simulate(600, rate_hz=40.0, seed=1)


def test_a_short_seeded_run_makes_the_weights_bimodal_at_a_steady_output_rate(trained_at_40_hz):
    stdp, (before, after, rates) = trained_at_40_hz
    assert stdp.bimodal_fraction(before) < 0.25  # uniform start: 20% lie within 10% of a bound
    assert stdp.bimodal_fraction(after) > 0.8
    assert 0.0 <= after.min() and after.max() <= 1.0
    assert (after >= 0.9).sum() >= 20  # a strong group, not every synapse pushed to 0
    counts = np.histogram(after, bins=10, range=(0, 1))[0]
    assert counts[0] == counts.max() and counts[9] > counts[2:9].max(), counts  # two modes, at 0 and at g_max
    late, earlier = rates[-100:].mean(), rates[-200:-100].mean()
    assert 3 <= late <= 30, late  # settled in a physiological range ...
    assert abs(late - earlier) <= 0.3 * earlier, (earlier, late)  # ... and steady
    assert rates[0] > 10 * late  # from the saturated start, the weights brought the rate down


def test_the_trained_output_rate_hardly_depends_on_the_input_rate(trained_at_40_hz):
    # A quarter of the input rate: 300 s suffice for the output rate to settle (not for the split).
    stdp, (_, _, fast) = trained_at_40_hz
    _, _, slow = stdp.simulate(300, rate_hz=10.0, seed=1)
    assert fast[0] > 10 * slow[0]  # untrained, four times the input drives the output ten times harder ...
    ratio = fast[-100:].mean() / slow[-100:].mean()
    assert 1 / 1.5 < ratio < 1.5, ratio  # ... trained, the output rates differ by less than half


def test_input_spikes_are_independent_draws_at_the_given_probability():
    stdp = load_example('stdp')
    grid = stdp.poisson_grid(np.random.default_rng(0), 2000, 1000, 0.04)
    assert grid.shape == (2000, 1000) and grid.dtype == bool
    assert abs(grid.mean() - 0.04) < 0.001
    per_input = grid.mean(axis=0)
    assert per_input.std() < 2 * np.sqrt(0.04 * 0.96 / 2000)  # binomial spread across inputs, no structure
    assert not stdp.poisson_grid(np.random.default_rng(0), 10, 10, 0.0).any()
