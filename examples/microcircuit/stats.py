"""Spike-train statistics of PD14's verification protocol (Dasbach et al. 2021): per-population distributions of
per-neuron rates, ISI CVs and spike-count correlation coefficients, their KS distances, and compact storage.

The rules, the same for every simulator:

- rates: spikes in the window over its length, for every neuron (silent ones count as 0 Hz);
- ISI CVs: standard deviation over mean of the inter-spike intervals of each neuron with at least two ISIs
  (three spikes) in the window; other neurons have no CV;
- correlations: a fixed subset of (at most) 200 neurons per population, drawn at random with a fixed seed among
  the neurons that spiked in the window (a silent neuron's count has no variance, so its coefficient is
  undefined); spike counts in 2 ms bins; the Pearson coefficient of every pair.

Stored samples are capped at ``SAMPLE`` values per population and statistic (a fixed-seed random subset), so that
a seed's file stays near 100 KB: at full scale the rates and CVs of all 77,169 neurons and the 19,900 pairs per
population would be several MB per seed. The cap costs KS resolution (about 1.36 sqrt(2 / 2000) = 0.04 at the 5 %
level); both sides of a comparison are capped alike, so the NEST-vs-NEST spread carries the same sampling noise.
"""

from __future__ import annotations

import numpy as np

STATS = ('rate', 'cv', 'corr')
BIN_MS = 2.0
CORR_NEURONS = 200
SAMPLE = 2000
SUBSET_SEED = 12345
EPS = 1e-6  # ms: spike times are multiples of dt in floating point, so edges are compared with this slack


def rates(ids, n, ms):
    """Per-neuron rates (spikes/s) of neurons ``0 .. n-1`` from the ids of their spikes in a window of ``ms``.

    >>> rates(np.array([0, 0, 2]), 3, 1000.0).tolist()
    [2.0, 0.0, 1.0]
    """
    if ms <= 0:
        raise ValueError(f'the window must be positive, got {ms} ms')
    return np.bincount(np.asarray(ids, np.int64), minlength=n)[:n] / (ms * 1e-3)


def _by_neuron(ids, times):
    ids = np.asarray(ids, np.int64)
    times = np.asarray(times, np.float64)
    if ids.shape != times.shape:
        raise ValueError(f'ids and times differ in shape: {ids.shape} vs {times.shape}')
    order = np.lexsort((times, ids))
    return ids[order], times[order]


def isi_cvs(ids, times):
    """ISI CVs of the neurons with at least two ISIs: ``(neuron ids, CVs)``.

    >>> isi_cvs(np.zeros(4, int), np.array([0.0, 10.0, 20.0, 30.0]))[1].tolist()
    [0.0]
    """
    ids, times = _by_neuron(ids, times)
    same = ids[1:] == ids[:-1]
    isi, owner = np.diff(times)[same], ids[1:][same]
    neurons, inverse, count = np.unique(owner, return_inverse=True, return_counts=True)
    keep = count >= 2
    mean = np.bincount(inverse, isi) / count
    var = np.bincount(inverse, (isi - mean[inverse]) ** 2) / count
    cv = np.sqrt(var) / np.where(mean > 0, mean, 1.0)
    return neurons[keep], cv[keep]


def binned_counts(ids, times, neurons, t0, ms, bin_ms=BIN_MS):
    """The ``(len(neurons), bins)`` spike counts of ``neurons`` in bins of ``bin_ms`` from ``t0`` over ``ms``."""
    neurons = np.asarray(neurons, np.int64)
    bins = int(round(ms / bin_ms))
    row = np.full(int(max(neurons.max(initial=-1), np.max(ids, initial=-1))) + 1, -1, np.int64)
    row[neurons] = np.arange(neurons.size)
    ids = np.asarray(ids, np.int64)
    b = np.floor((np.asarray(times, np.float64) - t0 + EPS) / bin_ms).astype(np.int64)
    r = row[ids]
    keep = (r >= 0) & (b >= 0) & (b < bins)
    counts = np.zeros((neurons.size, bins), np.float64)
    np.add.at(counts, (r[keep], b[keep]), 1.0)
    return counts


def correlations(counts):
    """Pearson coefficients of every pair of rows (upper triangle, row-major) of a counts matrix.

    >>> correlations(np.array([[0, 1, 0, 2], [0, 1, 0, 2]])).tolist()
    [1.0]
    """
    counts = np.asarray(counts, np.float64)
    if counts.ndim != 2 or counts.shape[0] < 2:
        raise ValueError(f'need a 2-D array of at least 2 rows, got shape {counts.shape}')
    c = counts - counts.mean(axis=1, keepdims=True)
    norm = np.sqrt((c * c).sum(axis=1))
    if np.any(norm == 0):
        raise ValueError('a row has no variance (a neuron without spikes); its coefficient is undefined')
    c /= norm[:, None]
    i, j = np.triu_indices(counts.shape[0], k=1)
    return (c @ c.T)[i, j]


def ks_distance(a, b):
    """The two-sample Kolmogorov-Smirnov distance (the largest gap between the empirical CDFs).

    >>> ks_distance([1.0, 2.0, 3.0], [1.0, 2.0, 3.0])
    0.0
    """
    a = np.sort(np.asarray(a, np.float64))
    b = np.sort(np.asarray(b, np.float64))
    if a.size == 0 or b.size == 0:
        return float('nan')
    grid = np.concatenate([a, b])
    cdf_a = np.searchsorted(a, grid, side='right') / a.size
    cdf_b = np.searchsorted(b, grid, side='right') / b.size
    return float(np.max(np.abs(cdf_a - cdf_b)))


def ks_critical(n, m, alpha=0.05):
    """The KS distance two independent samples of sizes ``n`` and ``m`` from one law exceed with probability
    ``alpha`` (the asymptotic Kolmogorov bound): the noise floor of a distance between samples of these sizes.

    >>> round(ks_critical(2000, 2000), 3)
    0.043
    """
    if n < 1 or m < 1:
        return float('nan')
    return float(np.sqrt(-0.5 * np.log(alpha / 2)) * np.sqrt((n + m) / (n * m)))


def cap(x, rng, size=None):
    """At most ``size`` (default ``SAMPLE``) values of ``x``, a random subset drawn from ``rng``, in order.

    >>> cap(np.arange(10), np.random.default_rng(0), 3).size
    3
    """
    size = SAMPLE if size is None else size
    x = np.asarray(x)
    return x if x.size <= size else x[np.sort(rng.choice(x.size, size, replace=False))]


def summarize_keys(populations):
    """The keys ``summarize`` writes for this many populations."""
    return {'mean_rate', 'n_cv', 'n_corr'} | {f'{name}_{p}' for name in STATS for p in range(populations)}


def summarize(ids, times, sizes, t0, ms, seed=SUBSET_SEED):
    """The per-population samples and means of spikes ``(ids, times)`` in ``[t0, t0 + ms)``.

    ``ids`` count from 0 over the populations in order, ``sizes`` their sizes. Returns a dict of float32 arrays
    ``{stat}_{p}`` (the capped samples) and ``mean_rate``, ``n_cv`` (neurons with a CV), ``n_corr`` (neurons
    correlated) per population, ready for ``np.savez_compressed``.
    """
    ids = np.asarray(ids, np.int64)
    times = np.asarray(times, np.float64)
    inside = (times >= t0 - EPS) & (times < t0 + ms - EPS)
    ids, times = ids[inside], times[inside]
    bounds = np.concatenate([[0], np.cumsum(sizes)])
    rng = np.random.default_rng(seed)
    out = {'mean_rate': [], 'n_cv': [], 'n_corr': []}
    for p in range(len(sizes)):
        lo, hi = int(bounds[p]), int(bounds[p + 1])
        mine = (ids >= lo) & (ids < hi)
        pid, pt = ids[mine] - lo, times[mine]
        r = rates(pid, hi - lo, ms)
        _, cv = isi_cvs(pid, pt)
        active = np.unique(pid)
        chosen = np.sort(rng.choice(active, min(CORR_NEURONS, active.size), replace=False))
        cc = correlations(binned_counts(pid, pt, chosen, t0, ms)) if chosen.size >= 2 else np.zeros(0)
        out['mean_rate'].append(r.mean())
        out['n_cv'].append(cv.size)
        out['n_corr'].append(chosen.size)
        for name, x in zip(STATS, (r, cv, cc)):
            out[f'{name}_{p}'] = cap(x, rng).astype(np.float32)
    out['mean_rate'] = np.asarray(out['mean_rate'], np.float64)
    out['n_cv'] = np.asarray(out['n_cv'], np.int64)
    out['n_corr'] = np.asarray(out['n_corr'], np.int64)
    return out
