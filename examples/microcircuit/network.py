"""Build PD14's connectivity in chunks of presynaptic neurons, straight into CSR order with packed delays.

The reference connects each [target, source] population pair with NEST's
``fixed_total_number`` rule: ``K`` synapses, each with a source drawn
uniformly from the source population and a target uniformly from the target
population (multapses and autapses allowed). The same distribution, drawn
source-major: the number of the pair's synapses each source neuron makes is
multinomial (``K`` draws over the sources, equally likely), and each of them
picks its target uniformly. So every presynaptic neuron's row is generated
whole, a chunk of rows at a time, and written into its place in the final
arrays: no sort of all synapses and no array of N^2 (or even of all
synapses' pairs) is ever made. Weights are normal (relative sd 0.1) redrawn
until they keep the mean's sign, delays normal (relative sd 0.5) redrawn
until at least half a step, then rounded to steps (at least one), as the
reference's ``nest.math.redraw`` and NEST's delay rounding give.

Each row's synapses are ordered by delay and stored as a
:class:`eventjax.DelayedCSR` (the layout that delivers by packed
``delay * n + column`` offsets into a ring of ``max delay + 1`` steps).
"""

from __future__ import annotations

import dataclasses

import numba
import numpy as np

from examples.microcircuit import params as P

CHUNK_SYNAPSES = 1 << 22  # synapses generated per chunk (tens of MB of temporaries)


def redraw_normal(rng, mean, sd, size, low, high):
    """Normal draws redrawn until inside ``[low, high]`` (NEST's ``redraw``): exactly the truncated normal."""
    out = rng.normal(mean, sd, size)
    bad = np.nonzero((out < low) | (out > high))[0]
    while bad.size:
        out[bad] = rng.normal(mean, sd, bad.size)
        bad = bad[(out[bad] < low) | (out[bad] > high)]
    return out


@dataclasses.dataclass
class Connectivity:
    """The recurrent synapses in CSR order (rows presynaptic), each row sorted by delay (in steps)."""

    indptr: np.ndarray  # int64, N + 1
    indices: np.ndarray  # int32, nnz
    weights: np.ndarray  # float32 or float64, nnz (pA)
    delays: np.ndarray  # int32, nnz (steps)

    @property
    def nnz(self):
        return int(self.indptr[-1])


@numba.njit(cache=True)
def _order_rows_by_delay(row_starts, delays, max_delay):
    """Within each row (``row_starts``, local), the permutation that orders its synapses by delay (counting sort)."""
    order = np.empty(delays.size, np.int64)
    count = np.zeros(max_delay + 2, np.int64)
    for r in range(row_starts.size - 1):
        lo, hi = row_starts[r], row_starts[r + 1]
        count[:] = 0
        for e in range(lo, hi):
            count[delays[e] + 1] += 1
        for d in range(1, max_delay + 2):
            count[d] += count[d - 1]
        for e in range(lo, hi):
            d = delays[e]
            order[lo + count[d]] = e
            count[d] += 1
    return order


def build_connectivity(derived, seed=55, dtype=np.float32, progress=None):
    """Draw the recurrent synapses of a network with ``derived`` parameters (see :func:`params.derive`)."""
    rng = np.random.default_rng(seed)
    sizes = np.asarray(derived.num_neurons, np.int64)
    offsets = np.concatenate([[0], np.cumsum(sizes)])
    n = int(offsets[-1])
    # counts[j][:, i]: synapses each neuron of source population j makes onto target population i
    counts = [np.stack([rng.multinomial(int(derived.num_synapses[i, j]), np.full(sizes[j], 1.0 / sizes[j]))
                        if derived.num_synapses[i, j] > 0 else np.zeros(sizes[j], np.int64) for i in range(8)],
                       axis=1) for j in range(8)]
    row_len = np.concatenate([c.sum(axis=1) for c in counts])
    indptr = np.zeros(n + 1, np.int64)
    np.cumsum(row_len, out=indptr[1:])
    nnz = int(indptr[-1])
    indices = np.empty(nnz, np.int32)
    weights = np.empty(nnz, dtype)
    delays = np.empty(nnz, np.int32)
    done = 0
    for j in range(8):
        if sizes[j] == 0:
            continue
        per_row = max(1, int(row_len[offsets[j]:offsets[j + 1]].mean()))
        rows_per_chunk = max(1, CHUNK_SYNAPSES // per_row)
        w_mean = derived.weight_mean[:, j]
        d_mean = derived.delay_mean[0, j]  # a delay depends on its source's type alone
        low, high = (0.0, np.inf) if w_mean[0] >= 0 else (-np.inf, 0.0)
        for a in range(0, sizes[j], rows_per_chunk):
            b = min(a + rows_per_chunk, sizes[j])
            c = counts[j][a:b]
            total = int(c.sum())
            if total == 0:
                continue
            # row-major: each row's synapses grouped by target population, rows in order
            tpop = np.repeat(np.tile(np.arange(8, dtype=np.int8), b - a), c.ravel())
            tgt = (offsets[tpop] + (rng.random(total) * sizes[tpop]).astype(np.int64)).astype(np.int32)
            mean = w_mean[tpop]
            w = mean + np.abs(mean) * P.WEIGHT_REL_STD * rng.standard_normal(total)
            bad = np.nonzero((w < low) | (w > high))[0]
            if bad.size:  # the sign kept: those redrawn (redraw_normal per entry)
                w[bad] = [redraw_normal(rng, m, abs(m) * P.WEIGHT_REL_STD, 1, low, high)[0] for m in mean[bad]]
            d = redraw_normal(rng, d_mean, d_mean * P.DELAY_REL_STD, total, P.DT - 0.5 * P.DT, np.inf)
            steps = np.maximum(np.floor(d / P.DT + 0.5), 1).astype(np.int32)
            starts = np.concatenate([[0], np.cumsum(c.sum(axis=1))])
            order = _order_rows_by_delay(starts, steps, int(steps.max()))
            lo, hi = indptr[offsets[j] + a], indptr[offsets[j] + b]
            indices[lo:hi] = tgt[order]
            weights[lo:hi] = w[order]
            delays[lo:hi] = steps[order]
            done += hi - lo
            if progress is not None:
                progress(done, nnz)
    return Connectivity(indptr, indices, weights, delays)


def initial_potentials(derived, seed=55):
    """The "optimized" initial membrane potentials (mV): normal per population."""
    rng = np.random.default_rng(seed + 1)
    return np.concatenate([rng.normal(P.V0_MEAN[p], P.V0_STD[p], derived.num_neurons[p]) for p in range(8)])
