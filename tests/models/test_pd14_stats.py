"""The spike-train statistics of PD14's verification protocol on hand-made trains, and the comparison against a
NEST seed spread on small stored summaries."""

import numpy as np
import pytest
from examples.microcircuit import compare_nest, stats
from examples.microcircuit import params as P

from tests.extras import PLOT_EXTRA


def poisson_train(rng, rate_hz, ms):
    isi = rng.exponential(1000.0 / rate_hz, size=int(rate_hz * ms * 2e-3) + 10)
    t = np.cumsum(isi)
    return t[t < ms]


def test_rates_count_silent_neurons_and_reject_an_empty_window():
    assert stats.rates(np.array([1, 1, 1, 3]), 5, 2000.0).tolist() == [0.0, 1.5, 0.0, 0.5, 0.0]
    with pytest.raises(ValueError, match='window'):
        stats.rates(np.array([0]), 1, 0.0)


def test_cv_of_a_regular_train_is_0_and_of_a_poisson_train_near_1():
    rng = np.random.default_rng(0)
    regular = np.arange(0.0, 1000.0, 25.0)
    poisson = poisson_train(rng, 50.0, 200_000.0)
    ids = np.concatenate([np.zeros(regular.size, int), np.ones(poisson.size, int), [2, 2]])  # neuron 2: 1 ISI
    times = np.concatenate([regular, poisson, [5.0, 9.0]])
    shuffle = rng.permutation(ids.size)  # the order of the spikes must not matter
    neurons, cv = stats.isi_cvs(ids[shuffle], times[shuffle])
    assert neurons.tolist() == [0, 1]
    assert cv[0] == pytest.approx(0.0, abs=1e-12)
    assert cv[1] == pytest.approx(1.0, abs=0.03)


def test_correlation_of_identical_trains_is_1_and_of_independent_ones_near_0():
    rng = np.random.default_rng(1)
    a, b = poisson_train(rng, 20.0, 100_000.0), poisson_train(rng, 20.0, 100_000.0)
    ids = np.concatenate([np.zeros(a.size, int), np.ones(a.size, int), np.full(b.size, 2)])
    counts = stats.binned_counts(ids, np.concatenate([a, a, b]), [0, 1, 2], 0.0, 100_000.0)
    assert counts.shape == (3, 50_000)
    assert counts.sum() == 2 * a.size + b.size
    cc = stats.correlations(counts)  # pairs (0, 1), (0, 2), (1, 2)
    assert cc[0] == pytest.approx(1.0)
    assert abs(cc[1]) < 0.03 and cc[1] == pytest.approx(cc[2])
    with pytest.raises(ValueError, match='no variance'):
        stats.correlations(np.array([[0, 1, 0], [0, 0, 0]]))


def test_ks_distance_is_0_for_identical_samples_1_for_disjoint_ones_and_matches_scipy():
    rng = np.random.default_rng(2)
    x, y = rng.normal(size=300), rng.normal(0.3, 1.0, size=500)
    assert stats.ks_distance(x, x) == 0.0
    assert stats.ks_distance([0.0, 1.0], [2.0, 3.0]) == 1.0
    scipy_stats = pytest.importorskip('scipy.stats')
    assert stats.ks_distance(x, y) == pytest.approx(scipy_stats.ks_2samp(x, y).statistic)
    rounded = np.round(x, 1)  # ties
    assert stats.ks_distance(rounded, y) == pytest.approx(scipy_stats.ks_2samp(rounded, y).statistic)
    assert stats.ks_critical(300, 500) == pytest.approx(1.358 * np.sqrt(800 / 150_000), rel=1e-3)


def fake_spikes(rng, sizes, ms, scale=1.0):
    ids, times = [], []
    offset = 0
    for p, n in enumerate(sizes):
        for i in range(n):
            t = poisson_train(rng, scale * (1.0 + p + i % 3), ms)
            ids.append(np.full(t.size, offset + i))
            times.append(t + 500.0)
        offset += n
    return np.concatenate(ids), np.concatenate(times)


def test_summarize_keeps_the_window_and_caps_the_samples(monkeypatch):
    monkeypatch.setattr(stats, 'SAMPLE', 30)
    monkeypatch.setattr(stats, 'CORR_NEURONS', 10)
    rng = np.random.default_rng(3)
    sizes = np.array([40] * 8)
    ids, times = fake_spikes(rng, sizes, 5000.0)
    early = np.array([0, 0, 0])  # before the window: not counted
    s = stats.summarize(np.concatenate([early, ids]), np.concatenate([[1.0, 2.0, 3.0], times]), sizes, 500.0, 5000.0)
    expected = np.bincount(np.searchsorted(np.cumsum(sizes), ids, side='right'), minlength=8) / 40 / 5.0
    np.testing.assert_allclose(s['mean_rate'], expected)
    assert s['n_corr'].tolist() == [10] * 8
    for p in range(8):
        assert s[f'rate_{p}'].size == 30 and s[f'rate_{p}'].dtype == np.float32
        assert s[f'corr_{p}'].size == 30  # of the 45 pairs
        assert 0.5 < np.median(s[f'cv_{p}']) < 1.5


def fake_summary(seed, scale=1.0):
    """The statistics of 8 populations of 30 fake neurons over 4 s (rates scaled by ``scale``)."""
    sizes = np.array([30] * 8)
    ids, times = fake_spikes(np.random.default_rng(seed), sizes, 4000.0, scale)
    return stats.summarize(ids, times, sizes, 500.0, 4000.0)


def test_comparison_flags_a_shifted_simulator_and_passes_a_faithful_one(tmp_path):
    nests = [fake_summary(s) for s in (10, 11, 12)]
    table, rates = compare_nest.compare(fake_summary(13), nests)
    assert len(table) == 3 * 8
    slow = fake_summary(14, scale=0.5)  # half the rates
    table_slow, rates_slow = compare_nest.compare(slow, nests)
    assert not any(ok for *_, ok in rates_slow)
    assert not any(table_slow['rate', p][-1] for p in range(8))
    assert sum(table['rate', p][-1] for p in range(8)) > sum(table_slow['rate', p][-1] for p in range(8))
    one, one_rates = compare_nest.compare(slow, nests[:1])  # no spread to be within
    assert all(v[-1] is None for v in one.values()) and all(r[-1] is None for r in one_rates)
    assert one['rate', 0][1] == [] and one['rate', 0][0] == table_slow['rate', 0][0][:1]
    with pytest.raises(ValueError, match='no NEST'):
        compare_nest.compare(slow, [])
    text = compare_nest.format_table(table_slow, rates_slow)
    assert text.count('NO') >= 16 and P.POPULATIONS[7] in text


def test_the_command_compares_stored_files_and_plots(tmp_path, capsys):
    sizes = np.array([20] * 8)
    meta = dict(scale=0.5, k_scale=0.5, drive='dc', t_presim=500.0, t_sim=3000.0, simulator='NEST test')
    for seed in (1, 2):
        ids, times = fake_spikes(np.random.default_rng(seed), sizes, 3000.0)
        np.savez_compressed(tmp_path / f'nest_stats_dc_seed{seed}.npz', **stats.summarize(ids, times, sizes, 500.0,
                                                                                          3000.0), seed=seed, **meta)
    ids, times = fake_spikes(np.random.default_rng(3), sizes, 3000.0)
    np.savez_compressed(tmp_path / 'eventjax_stats_dc_seed3.npz', **stats.summarize(ids, times, sizes, 500.0, 3000.0),
                        seed=3, **meta)
    assert compare_nest.main(['--data', str(tmp_path), '--seed', '3']) == 0
    out = capsys.readouterr().out
    assert 'seeds 1, 2' in out and out.count('\n') > 30
    with pytest.raises(SystemExit):  # no stored eventjax file for this seed
        compare_nest.main(['--data', str(tmp_path), '--seed', '4'])
    pytest.importorskip('matplotlib', reason=PLOT_EXTRA)
    png = tmp_path / 'cdf.png'
    assert compare_nest.main(['--data', str(tmp_path), '--seed', '3', '--plot', str(png)]) == 0
    assert png.stat().st_size > 10_000


def test_clipped_delay_runs_are_stored_and_judged_apart_from_the_reference_runs(tmp_path, capsys):
    sizes = np.array([20] * 8)
    meta = dict(scale=0.5, k_scale=0.5, drive='dc', t_presim=500.0, t_sim=3000.0, simulator='test')
    for name, seed in (('nest_stats_dc_seed1', 1), ('nest_stats_dc_seed2', 2), ('eventjax_stats_dc_seed3', 3),
                       ('eventjax_stats_dc_dmin2_seed4', 4), ('eventjax_stats_dc_dmin2_seed5', 5)):
        ids, times = fake_spikes(np.random.default_rng(seed), sizes, 3000.0)
        np.savez_compressed(tmp_path / f'{name}.npz', **stats.summarize(ids, times, sizes, 500.0, 3000.0),
                            seed=seed, **meta)
    assert compare_nest.main(['--data', str(tmp_path), '--seed', '4', '--delay-min', '2']) == 0
    assert 'eventjax seeds 4, 5 against' in capsys.readouterr().out
    assert compare_nest.main(['--data', str(tmp_path), '--seed', '3']) == 0
    assert 'eventjax seeds 3 against' in capsys.readouterr().out
    with pytest.raises(SystemExit):  # no clipped run of seed 3
        compare_nest.main(['--data', str(tmp_path), '--seed', '3', '--delay-min', '2'])
    with pytest.raises(SystemExit):
        compare_nest.main(['--data', str(tmp_path), '--delay-min', '0'])


def test_several_eventjax_seeds_are_judged_by_the_median_of_their_distances():
    nests = [fake_summary(s) for s in (20, 21, 22)]
    faithful = [fake_summary(s) for s in (23, 24, 25)]
    table, rates = compare_nest.compare(faithful, nests)
    assert len(table['rate', 0][0]) == 9 and len(table['rate', 0][1]) == 3
    slow = [fake_summary(s, scale=0.5) for s in (26, 27, 28)]
    table_slow, rates_slow = compare_nest.compare(slow, nests)
    assert not any(ok for *_, ok in rates_slow)
    assert sum(v[-1] for v in table.values()) > sum(v[-1] for v in table_slow.values())
    assert 'within NEST\'s spread: ' in compare_nest.format_table(table, rates)


def test_the_eventjax_side_runs_at_small_scale():
    summary, wall = compare_nest.run_eventjax(0.02, 1.0, 'dc', 1, 50.0, 100.0, progress=None)
    assert wall > 0 and summary['mean_rate'].shape == (8,) and summary['mean_rate'].sum() > 0


def test_the_yardstick_judges_each_simulator_s_seeds_by_the_same_rule():
    nests = [fake_summary(s) for s in (30, 31, 32)]
    theirs, mine = compare_nest.yardstick([fake_summary(33)], nests)
    assert len(theirs) == 3 and len(mine) == 3
    _, slow = compare_nest.yardstick([fake_summary(34, scale=0.5)], nests)
    assert max(b for _, b in slow) == 0 and sum(a for a, _ in slow) < sum(a for a, _ in mine)
