"""docs/examples/stdp.py: additive STDP drives the weights towards 0 and g_max (Song, Miller & Abbott 2000)."""

import importlib.util
import pathlib

import numpy as np

EXAMPLE = pathlib.Path(__file__).parent.parent / 'docs' / 'examples' / 'stdp.py'


def _example():
    spec = importlib.util.spec_from_file_location('stdp_example', EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_a_short_seeded_run_splits_the_weights_towards_both_bounds():
    # 100 s with a faster rate (A+ = 0.02 g_max) in a few seconds of CPU; the full split (most weights within
    # 10% of a bound) takes thousands of seconds at the paper's A+ (see the example's figure).
    stdp = _example()
    before, after, rates = stdp.simulate(100, a_plus=0.02, seed=1)
    counts = np.histogram(after, bins=10, range=(0, 1))[0]
    assert set(np.argsort(counts)[-2:]) == {0, 9}, counts  # the two end bins hold the most weights
    assert stdp.bimodal_fraction(after) > stdp.bimodal_fraction(before) + 0.08
    assert 0.0 <= after.min() and after.max() <= 1.0
    assert 1 <= rates[-10:].mean() <= 40  # the output rate stays in a physiological range
