"""Brette's seed statistics: one run's summary (window, died-out runs, CVs) and the comparison of two simulators'
seed sets, on hand-made spike trains."""

import numpy as np
import pytest
from examples.brette2007 import model, seed_stats


def test_sizes_are_the_model_s():
    assert (seed_stats.N_E, seed_stats.N) == (model.N_E, model.N)


def regular_run(rate_hz, t_sim, stop=None, jitter=0.0, seed=0):
    """Every neuron fires regularly at ``rate_hz`` (phases spread) until ``stop`` ms."""
    rng = np.random.default_rng(seed)
    period = 1000.0 / rate_hz
    stop = t_sim if stop is None else stop
    ids, times = [], []
    for i in range(seed_stats.N):
        t = np.arange(rng.uniform(0, period), stop, period)
        ids.append(np.full(t.size, i))
        times.append(t + rng.normal(0, jitter, t.size) if jitter else t)
    return np.concatenate(ids), np.concatenate(times)


def test_summary_counts_the_window_only_and_tells_a_run_that_died():
    ids, times = regular_run(10.0, 1000.0)
    rates, sustained, (cv_e, cv_i) = seed_stats.summarize(ids, times, 1000.0)
    np.testing.assert_allclose(rates, 10.0, atol=0.2)
    assert sustained
    assert cv_e.size == seed_stats.CV_SAMPLE and cv_i.size == seed_stats.N - seed_stats.N_E
    np.testing.assert_allclose(cv_e, 0.0, atol=1e-5)
    ids, times = regular_run(10.0, 1000.0, stop=700.0)
    rates, sustained, _ = seed_stats.summarize(ids, times, 1000.0)
    assert not sustained
    np.testing.assert_allclose(rates, 10.0 * 500 / 800, atol=0.2)


def summaries(seeds, jitter, died=()):
    out = {'seeds': np.asarray(seeds), 'simulator': 'test', 't_sim': 1000.0}
    for name in seed_stats.MODELS:
        rates, sustained = [], []
        for k, seed in enumerate(seeds):
            # rates 10, 10.5 and 11 Hz by seed, so that seeds spread
            ids, times = regular_run(10.0 + 0.5 * (seed % 3), 1000.0, stop=500.0 if seed in died else None,
                                     jitter=jitter, seed=seed)
            r, s, cvs = seed_stats.summarize(ids, times, 1000.0)
            rates.append(r)
            sustained.append(s)
            out[f'{name}_cv_E_{k}'], out[f'{name}_cv_I_{k}'] = cvs
        out[f'{name}_rates'], out[f'{name}_sustained'] = np.asarray(rates), np.asarray(sustained)
    return out


def test_comparison_passes_a_like_simulator_flags_another_and_counts_dead_runs():
    nest = summaries([1, 2, 3, 4], jitter=5.0, died=(4,))
    like = summaries([7, 8], jitter=5.0, died=(8,))
    rows = seed_stats.compare(like, nest)
    assert [(r[0], r[1]) for r in rows] == [('cuba', 'E'), ('cuba', 'I'), ('coba', 'E'), ('coba', 'I')]
    assert all(r[2:4] == (1, 1) for r in rows)
    assert all(r[-1] for r in rows)
    regular = summaries([6, 9], jitter=0.0)  # CV 0: far from NEST's jittered trains
    rows = seed_stats.compare(regular, nest)
    assert not any(r[-1] for r in rows)
    assert min(min(r[6]) for r in rows) > 0.9
    assert 'NO' in seed_stats.format_rows(rows, regular, nest)
    with pytest.raises(ValueError, match='at least 1 and 2'):
        seed_stats.compare(regular, summaries([1, 2], jitter=5.0, died=(2,)))


def test_seed_lists_parse_ranges_and_commas():
    assert seed_stats.seed_list('1-4') == [1, 2, 3, 4]
    assert seed_stats.seed_list('2,5') == [2, 5]
