"""Build PD14's connectivity straight into CSR order with packed delays, rows drawn in parallel.

The reference connects each [target, source] population pair with NEST's
``fixed_total_number`` rule: ``K`` synapses, each with a source drawn
uniformly from the source population and a target uniformly from the target
population (multapses and autapses allowed). The same distribution, drawn
source-major: the number of the pair's synapses each source neuron makes is
multinomial (``K`` draws over the sources, equally likely), and each of them
picks its target uniformly. So every presynaptic neuron's row is generated
whole, in its place in the final arrays: no sort of all synapses and no
array of N^2 (or even of all synapses' pairs) is ever made. Weights are
normal (relative sd 0.1) redrawn until they keep the mean's sign, delays
normal (relative sd 0.5) redrawn until at least half a step, then rounded to
steps (at least one), as the reference's ``nest.math.redraw`` and NEST's
delay rounding give.

The rows are drawn by a numba kernel in ``STREAMS`` runs of consecutive rows
(about equal numbers of synapses), the runs spread over the cores; each run
draws from its own NumPy generator (PCG64, ziggurat normals), spawned from
the seed's ``SeedSequence``, so a network depends on the seed alone, never
on the number of threads. Each row's synapses are written in two parts, those
onto the columns below ``split_column`` then the others, each part ordered by
delay, as packed offsets ``delay * n + column`` beside their weights: the
two arrays :class:`eventjax.CSRDelayLayout` delivers from, and all the
network keeps (columns and delays are recovered from the offsets when asked
for), plus where each row's second part begins. The split lets two threads
deliver a spike's synapses apart, each reading only its part and adding
into only its columns (``owner_split``); the column is chosen so that both
parts hold about as many synapses. They are
allocated 64-byte aligned, so JAX can take them without a copy.
"""

from __future__ import annotations

import concurrent.futures
import dataclasses

import numba
import numpy as np

from eventjax.backends.numba import get_num_threads
from examples.microcircuit import params as P

STREAMS = 16  # runs of rows with their own generator: the unit of parallel work and of reproducibility


def aligned_empty(size, dtype, align=64):
    """``np.empty(size, dtype)`` starting on an ``align``-byte boundary (JAX on CPU aliases such a buffer)."""
    itemsize = np.dtype(dtype).itemsize
    raw = np.empty(size * itemsize + align, np.uint8)
    start = -raw.ctypes.data % align
    return raw[start:start + size * itemsize].view(dtype)


@dataclasses.dataclass
class Connectivity:
    """The recurrent synapses in CSR order (rows presynaptic), each row in two parts (columns below
    ``split_column``, then the rest), each part sorted by delay (in steps)."""

    indptr: np.ndarray  # int64, N + 1
    offsets: np.ndarray  # int32, nnz: delay * n + column
    weights: np.ndarray  # float32 or float64, nnz (pA)
    n: int
    max_delay: int  # steps
    splits: np.ndarray  # int64, N: where each row's synapses onto columns >= split_column begin
    split_column: int

    @property
    def nnz(self):
        return int(self.indptr[-1])

    @property
    def indices(self):
        """The column (target) of each synapse (computed from the offsets)."""
        return self.offsets % np.int32(self.n)

    @property
    def delays(self):
        """The delay (steps) of each synapse (computed from the offsets)."""
        return self.offsets // np.int32(self.n)


@numba.njit(inline='always')
def draw_row(g, r, j, counts, first, sizes, w_mean, w_sd, d_mean, d_sd, d_min, target, weight, steps):
    """Draw row ``r`` (population ``j``) from ``g`` into ``target``, ``weight`` and ``steps``; returns
    ``(synapses, longest delay)``; a delay is at least ``d_min`` steps. Every draw of a row is made here, so
    any kernel that calls it (the whole network's or one process's block, :mod:`blocks`) consumes a stream
    exactly as the others do."""
    d_low = 0.5 * P.DT  # a delay is redrawn below half a step (it would round to 0)
    k = 0
    for i in range(8):
        mean, sd = w_mean[i, j], w_sd[i, j]
        for _ in range(counts[r, i]):
            target[k] = first[i] + min(np.int64(g.random() * sizes[i]), sizes[i] - 1)
            w = g.normal(mean, sd)
            while (w < 0.0) if mean >= 0.0 else (w > 0.0):  # the sign kept (redraw)
                w = g.normal(mean, sd)
            weight[k] = w
            k += 1
    row_top = 1
    for e in range(k):
        d = g.normal(d_mean[j], d_sd[j])
        while d < d_low:
            d = g.normal(d_mean[j], d_sd[j])
        steps[e] = max(np.int64(np.floor(d / P.DT + 0.5)), d_min)
        row_top = max(row_top, steps[e])
    return k, row_top


@numba.njit(inline='always')
def row_scratch(indptr, r0, r1):
    """One run's scratch for :func:`draw_row`: targets, weights and delays for the longest of rows ``[r0, r1)``."""
    longest = 0
    for r in range(r0, r1):
        longest = max(longest, indptr[r + 1] - indptr[r])
    return np.empty(longest, np.int64), np.empty(longest, np.float64), np.empty(longest, np.int64)


@numba.njit(cache=True, nogil=True)
def _draw_run(g, r0, r1, counts, indptr, first, sizes, pop_of, w_mean, w_sd, d_mean, d_sd, d_min, offsets, weights,
              split_column, splits):
    """Draw rows ``[r0, r1)`` from generator ``g``: ``counts[r, i]`` synapses of row ``r`` onto population ``i``
    each; ``splits[r]``: where row ``r``'s synapses onto columns ``>= split_column`` begin. Returns the run's
    longest delay (steps)."""
    n = indptr.size - 1
    target, weight, steps = row_scratch(indptr, r0, r1)
    top = 1
    for r in range(r0, r1):
        k, row_top = draw_row(g, r, pop_of[r], counts, first, sizes, w_mean, w_sd, d_mean, d_sd, d_min, target,
                              weight, steps)
        # counting sort of the row by (column half, delay), stable, written in place in the final arrays;
        # the draws do not depend on the order, so a network is the same whatever split_column
        keys = row_top + 1
        start = np.zeros(2 * keys + 1, np.int64)
        for e in range(k):
            start[(target[e] >= split_column) * keys + steps[e] + 1] += 1
        for d in range(1, 2 * keys + 1):
            start[d] += start[d - 1]
        lo = indptr[r]
        splits[r] = lo + start[keys]
        for e in range(k):
            key = (target[e] >= split_column) * keys + steps[e]
            at = lo + start[key]
            start[key] += 1
            offsets[at] = steps[e] * n + target[e]
            weights[at] = weight[e]
        top = max(top, row_top)
    return top


def over_runs(draw_run, pl):
    """``[draw_run(s, generator, r0, r1) for each run s]`` of :class:`Plan` ``pl``, on the library's thread count.

    The runs are serial kernels that release the GIL, so Python threads run them side by side: the
    parallelism of a ``prange`` over the runs (as many threads as the library's numba kernels use,
    ``eventjax.backends.numba.get_num_threads()``), at a serial kernel's compile time, half a parallel
    one's on a fresh install. Each run writes only its own rows. (``numba.get_num_threads()`` would
    launch numba's threads on its default layer, before the library picks its own.)
    """
    runs = len(pl.generators)
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, min(runs, get_num_threads()))) as pool:
        return list(pool.map(lambda s: draw_run(s, pl.generators[s], pl.bounds[s], pl.bounds[s + 1]), range(runs)))


def balanced_split_column(derived, lo=0, hi=None):
    """The column in ``[lo, hi]`` (default: all) below which the targets of columns ``[lo, hi)`` receive about
    half of their synaptic events, at the populations' expected rates (:data:`params.FULL_MEAN_RATES`;
    populations in column order).

    The two parts are delivered by two threads, so each should carry half of the events, not half of the
    synapses: L2/3's neurons receive the most synapses but from the slowest sources, and a split by synapses
    gave the second thread 57% of the events.

    Example:
        >>> from examples.microcircuit import params as P
        >>> balanced_split_column(P.derive(1.0, 1.0, 'dc'))  # of 77,169 neurons
        38196
    """
    sizes = np.asarray(derived.num_neurons, np.int64)
    events = np.asarray(derived.num_synapses, np.float64) @ P.FULL_MEAN_RATES  # [target, source] @ [source]
    received = np.cumsum(np.repeat(events / np.maximum(sizes, 1), sizes)[lo:hi])
    return lo + int(np.searchsorted(received, received[-1] / 2)) if received.size else lo


@dataclasses.dataclass
class Plan:
    """What the row draws need, before any synapse is drawn: how many synapses each row makes onto each
    population (``counts``), the runs of rows each drawn from its own generator, and the laws' parameters."""

    counts: np.ndarray  # (n, 8): synapses of row r onto population i
    indptr: np.ndarray  # int64, n + 1: the whole network's rows
    first: np.ndarray  # first column of each population (9 entries)
    sizes: np.ndarray
    pop_of: np.ndarray
    w_mean: np.ndarray
    w_sd: np.ndarray
    d_mean: np.ndarray
    d_sd: np.ndarray
    d_min: int  # steps
    bounds: np.ndarray  # STREAMS + 1: the runs of rows
    generators: tuple  # one per run

    @property
    def n(self):
        return int(self.first[-1])

    @property
    def nnz(self):
        return int(self.indptr[-1])

    def row_args(self):
        """The arguments every run's kernel takes after its generator and rows: the laws of the rows."""
        return (self.counts, self.indptr, self.first[:8], self.sizes, self.pop_of, self.w_mean, self.w_sd,
                self.d_mean, self.d_sd, self.d_min)


def plan(derived, seed=55):
    """The :class:`Plan` of a network with ``derived`` parameters drawn from ``seed`` (fresh generators)."""
    rng = np.random.default_rng(seed)
    sizes = np.asarray(derived.num_neurons, np.int64)
    first = np.concatenate([[0], np.cumsum(sizes)])
    n = int(first[-1])
    # counts[r, i]: synapses neuron r makes onto target population i (multinomial over its source population)
    counts = np.zeros((n, 8), np.int64)
    for j in range(8):
        for i in range(8):
            if derived.num_synapses[i, j] > 0 and sizes[j] > 0:
                counts[first[j]:first[j + 1], i] = rng.multinomial(int(derived.num_synapses[i, j]),
                                                                    np.full(sizes[j], 1.0 / sizes[j]))
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(counts.sum(axis=1), out=indptr[1:])
    nnz = int(indptr[-1])
    w_mean = np.asarray(derived.weight_mean, np.float64)
    d_mean = np.asarray(derived.delay_mean[0], np.float64)  # a delay depends on its source's type alone
    # the runs of rows: about nnz / STREAMS synapses each, each with its own generator
    bounds = np.searchsorted(indptr, np.arange(STREAMS + 1) * (nnz / STREAMS), side='left')
    bounds[0], bounds[-1] = 0, n
    generators = tuple(np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(STREAMS))
    return Plan(counts, indptr, first, sizes, np.repeat(np.arange(8), sizes), w_mean,
                np.abs(w_mean) * P.WEIGHT_REL_STD, d_mean, d_mean * P.DELAY_REL_STD, derived.delay_min, bounds,
                generators)


def build_connectivity(derived, seed=55, dtype=np.float32, split=True):
    """Draw the recurrent synapses of a network with ``derived`` parameters (see :func:`params.derive`).

    ``split``: order each row in two parts at :func:`balanced_split_column`
    (else one part, each row sorted by delay alone). Either way the same
    synapses, and for any one target and delay in the same order.
    """
    pl = plan(derived, seed)
    n, nnz, indptr = pl.n, pl.nnz, pl.indptr
    offsets, weights = aligned_empty(nnz, np.int32), aligned_empty(nnz, dtype)
    max_delay = np.ones(STREAMS, np.int64)
    split_column = balanced_split_column(derived) if split else n
    splits = indptr[1:].copy()
    if nnz:
        laws = pl.row_args()
        max_delay[:] = over_runs(lambda s, g, r0, r1: _draw_run(g, r0, r1, *laws, offsets, weights, split_column,
                                                                splits), pl)
    if (int(max_delay.max()) + 1) * n >= 2 ** 31:
        raise ValueError(f'build_connectivity(): a ring of {int(max_delay.max()) + 1} x {n} steps is past 2**31.')
    return Connectivity(indptr, offsets, weights, n, int(max_delay.max()), splits, split_column)


def initial_potentials(derived, seed=55):
    """The "optimized" initial membrane potentials (mV): normal per population."""
    rng = np.random.default_rng(seed + 1)
    return np.concatenate([rng.normal(P.V0_MEAN[p], P.V0_STD[p], derived.num_neurons[p]) for p in range(8)])
