"""One process's block of PD14's connectivity: the synapses onto the columns it owns, drawn as one process does.

Neurons are split over processes in contiguous blocks of columns
(``eventjax.distributed.own_rows``). A process owns the state of its
neurons and the part of the ring that feeds them, so it needs every
presynaptic row but only the synapses onto its columns ``[lo, hi)``. A
row's synapses are drawn from fixed streams (:mod:`network`): each process
draws every row from the same :class:`network.Plan`, with the same kernel
for a row's draws (:func:`network.draw_row`), and keeps the synapses whose
target it owns. The blocks of all processes are then exactly the
one-process network's synapses, split by target column.

Each row's kept synapses are ordered as :func:`network.build_connectivity`
orders a row: a stable counting sort by (column below ``split_column``,
delay). Synapses onto one target with one delay therefore stay in draw
order, and each ring entry receives its adds in the one-process order: the
same sums, bit for bit. Offsets are local, ``delay * width + (column -
lo)``, for a ring of ``width`` columns (the block padded to the exchange's
word size).

Memory: a process holds its block alone (8 bytes a kept synapse), the
plan (8 counts a neuron) and, while drawing, one buffer per run of rows
sized by the synapses its rows make onto the populations the block
touches; pages never written are never resident, and each run's buffer is
freed as it is copied into the block's final arrays.
"""

from __future__ import annotations

import dataclasses

import numba
import numpy as np

from examples.microcircuit import network


@dataclasses.dataclass
class Block:
    """The synapses onto columns ``[lo, hi)``, rows presynaptic (all ``n``), each row in two parts (local columns
    below ``split_column - lo``, then the rest), each part sorted by delay; arrays may be longer than ``nnz``."""

    indptr: np.ndarray  # int64, n + 1
    offsets: np.ndarray  # int32, >= nnz: delay * width + (column - lo)
    weights: np.ndarray  # >= nnz
    splits: np.ndarray  # int64, n: where each row's second part begins
    lo: int
    hi: int
    width: int  # ring columns (>= hi - lo)
    split_column: int  # global column
    max_delay: int  # steps, the longest delay of the whole network (every process's ring must hold it)

    @property
    def nnz(self):
        return int(self.indptr[-1])

    @property
    def columns(self):
        """The global column (target) of each synapse."""
        return self.offsets[:self.nnz] % np.int32(self.width) + self.lo

    @property
    def delays(self):
        return self.offsets[:self.nnz] // np.int32(self.width)


@dataclasses.dataclass
class Draw:
    """A block's synapses as drawn, one buffer per run of rows; :meth:`assemble` makes the :class:`Block`."""

    kept: np.ndarray  # int64, n: synapses of each row onto the block
    first_part: np.ndarray  # int64, n: of them, onto columns below split_column
    offsets: list
    weights: list
    bounds: np.ndarray
    lo: int
    hi: int
    width: int
    split_column: int
    max_delay: int

    @property
    def nnz(self):
        return int(self.kept.sum())

    def assemble(self, capacity=None):
        """The :class:`Block`, its arrays ``capacity`` entries long (default ``nnz``; more pads them, as a
        global array whose every shard has one shape needs). The buffers are released as they are copied."""
        capacity = self.nnz if capacity is None else int(capacity)
        if capacity < self.nnz:
            raise ValueError(f'Draw.assemble(): capacity {capacity} is below the block\'s {self.nnz} synapses.')
        indptr = np.zeros(self.kept.size + 1, np.int64)
        np.cumsum(self.kept, out=indptr[1:])
        offsets = network.aligned_empty(capacity, np.int32)
        weights = network.aligned_empty(capacity, self.weights[0].dtype)
        # The entries past nnz are never read (past indptr[-1]) and never written: pages never touched cost
        # no memory, so a process padded to a larger block's size holds only its own synapses.
        for s in range(len(self.offsets)):
            at, to = indptr[self.bounds[s]], indptr[self.bounds[s + 1]]
            offsets[at:to], weights[at:to] = self.offsets[s][:to - at], self.weights[s][:to - at]
            self.offsets[s] = self.weights[s] = None
        return Block(indptr, offsets, weights, indptr[:-1] + self.first_part, self.lo, self.hi, self.width,
                     self.split_column, self.max_delay)


@numba.njit(cache=True, nogil=True)
def _draw_block_run(g, r0, r1, counts, indptr, first, sizes, pop_of, w_mean, w_sd, d_mean, d_sd, d_min, lo, hi, width,
                    split_column, out_o, out_w, kept, first_part):
    """Draw rows ``[r0, r1)`` from ``g`` as :func:`network._draw_run` does; keep the synapses onto ``[lo, hi)`` in
    ``out_o`` and ``out_w`` (rows in order, each sorted by (column half, delay)). Returns the longest delay."""
    target, weight, steps = network.row_scratch(indptr, r0, r1)
    top = 1
    at = 0
    for r in range(r0, r1):
        k, row_top = network.draw_row(g, r, pop_of[r], counts, first, sizes, w_mean, w_sd, d_mean, d_sd, d_min,
                                      target, weight, steps)
        top = max(top, row_top)
        keys = row_top + 1
        start = np.zeros(2 * keys + 1, np.int64)
        for e in range(k):
            if lo <= target[e] < hi:
                start[(target[e] >= split_column) * keys + steps[e] + 1] += 1
        for d in range(1, 2 * keys + 1):
            start[d] += start[d - 1]
        kept[r] = start[2 * keys]
        first_part[r] = start[keys]
        for e in range(k):
            if lo <= target[e] < hi:
                key = (target[e] >= split_column) * keys + steps[e]
                q = at + start[key]
                start[key] += 1
                out_o[q] = steps[e] * width + target[e] - lo
                out_w[q] = weight[e]
        at += kept[r]
    return top


def draw_block(derived, seed, lo, hi, width=None, dtype=np.float32, split=True):
    """Draw the synapses of the network ``(derived, seed)`` onto columns ``[lo, hi)``, exactly those of
    :func:`network.build_connectivity`; returns a :class:`Draw` (call ``assemble()`` for the :class:`Block`).

    ``width``: the ring's columns (default ``hi - lo``); ``split``: two parts per row at the block's
    :func:`network.balanced_split_column` (for :mod:`owner_split`'s two threads), else one.

    Example:
        >>> from examples.microcircuit import params as P
        >>> derived = P.derive(0.01, 0.01, 'dc')
        >>> halves = [draw_block(derived, 55, lo, hi).assemble() for lo, hi in ((0, 400), (400, 771))]
        >>> sum(b.nnz for b in halves) == network.build_connectivity(derived, 55).nnz
        True
    """
    pl = network.plan(derived, seed)
    n = pl.n
    if not 0 <= lo <= hi <= n:
        raise ValueError(f'draw_block(): the columns [{lo}, {hi}) must lie within the network\'s [0, {n}).')
    width = hi - lo if width is None else int(width)
    if width < hi - lo:
        raise ValueError(f'draw_block(): width {width} is narrower than the block of {hi - lo} columns.')
    split_column = network.balanced_split_column(derived, lo, hi) if split else hi
    # A run's buffer holds every synapse its rows make onto the populations the block touches: at most what it
    # keeps, and only the pages written become resident.
    touched = (pl.first[1:] > lo) & (pl.first[:-1] < hi)
    per_row = pl.counts[:, touched].sum(axis=1)
    room = [int(per_row[pl.bounds[s]:pl.bounds[s + 1]].sum()) for s in range(network.STREAMS)]
    offsets = [np.empty(max(c, 1), np.int32) for c in room]
    weights = [np.empty(max(c, 1), dtype) for c in room]
    kept, first_part = np.zeros(n, np.int64), np.zeros(n, np.int64)
    max_delay = np.ones(network.STREAMS, np.int64)
    if pl.nnz:
        laws = pl.row_args()
        max_delay[:] = network.over_runs(lambda s, g, r0, r1: _draw_block_run(
            g, r0, r1, *laws, lo, hi, width, split_column, offsets[s], weights[s], kept, first_part), pl)
    if (int(max_delay.max()) + 1) * width >= 2 ** 31:
        raise ValueError(f'draw_block(): a ring of {int(max_delay.max()) + 1} x {width} steps is past 2**31.')
    return Draw(kept, first_part, offsets, weights, pl.bounds, lo, hi, width, split_column, int(max_delay.max()))
