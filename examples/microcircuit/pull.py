"""PD14's delivery at read time: each step sums the synapses that arrive now into a vector of inputs.

A push delivery adds a spike's synapses into a ring of delay slots when the
spike happens (:mod:`owner_split`): at full scale each add lands on its own
cache line of an 18 MB ring. Here nothing is added ahead. The rows are
stored in two parts by target column, each sorted by delay
(:mod:`network`), so a row that spiked ``d`` steps ago contributes one run
of each part, its delay-``d`` synapses, to the input read now. The spikes
of the last ``L - 1`` steps are held as row lists; at step ``t`` each of two
threads walks them, oldest step first and rows ascending within a step,
and adds each row's delay-``d`` run of its part into its half of the
``n``-float input (its columns, as in :mod:`owner_split`; a part's run
adds only into its own columns). The input stays
in the core's cache and there is no ring to clear; the synapses are read
in short runs (tens of synapses), so the caches are asked for the next runs' lines ahead.

Where each run lies comes from :func:`delay_ends`: per row, part and delay
``d``, how many of the part's synapses have a delay of at most ``d``. The
runs read each synapse's weight and its column counted from its part's
first column (:func:`layout`: 2 bytes where a part is at most 2**16
columns wide, not the packed offset's 4).

Each input entry receives its adds in the push delivery's order (spike
steps ascending, rows ascending, a part's synapses in stored order) from
zero, so the inputs are bit for bit the ring's slots.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numba
import numpy as np

import eventjax as ej
from eventjax.backends.numba import prefetch
from eventjax.kernels.common.numba.scatter import event_rows
from examples.microcircuit import network, owner_split

# Cache lines of synapses asked for ahead of the sums, along the runs in order: the runs are short and
# scattered over the 2.4 GB of synapses, so the hardware prefetcher does not see them coming; a fixed number
# of lines in flight (not all the lines of the run so many runs ahead) keeps the core's line fill buffers
# busy but not over-full (a full-scale step 6% faster on one thread than 16 whole runs ahead).
LINES_AHEAD = 16
PARALLEL_MIN_SPIKES = 64  # fewer spikes held: one thread sums both parts (waking the other costs microseconds)
_U = np.uint64


def delay_ends(offsets, indptr, splits, n, length):
    """``ends[r, part, d]``: how many synapses of row ``r``'s part (0: ``[indptr[r], splits[r])``, 1: the rest)
    have a delay of at most ``d`` steps; uint16 where every part is shorter than 2**16, else uint32.

    Raises ValueError unless every packed offset ``delay * n + column`` has a delay in ``[1, length)``.

    Example:
        >>> # one row: column 0 delay 1, column 0 delay 2 | column 1 delay 1; split at synapse 2
        >>> delay_ends(np.array([2, 4, 3]), np.array([0, 3]), np.array([2]), 2, 3)[0].tolist()
        [[0, 1, 2], [0, 1, 1]]
    """
    offsets = np.asarray(offsets)
    if offsets.size and (int(offsets.min()) < n or int(offsets.max()) >= length * n):
        raise ValueError(f'delay_ends(): the delivery at read time needs every delay in [1, {length}) steps '
                         '(no dropped synapse); build the network with delays of at least one step.')
    indptr, splits = np.asarray(indptr, np.int64), np.asarray(splits, np.int64)
    longest = max(int(np.max(splits - indptr[:-1], initial=0)), int(np.max(indptr[1:] - splits, initial=0)))
    ends = np.empty((splits.shape[0], 2, length), np.uint16 if longest < 2 ** 16 else np.uint32)
    _fill_ends(offsets, indptr, splits, n, ends)
    return ends


@numba.njit(cache=True, parallel=True)
def _fill_ends(offsets, indptr, splits, n, ends):
    for r in numba.prange(ends.shape[0]):
        for part in range(2):
            lo = indptr[r] if part == 0 else splits[r]
            hi = splits[r] if part == 0 else indptr[r + 1]
            d = 0
            for k in range(lo, hi):
                while d < offsets[k] // n:
                    ends[r, part, d] = k - lo
                    d += 1
            for e in range(d, ends.shape[2]):
                ends[r, part, e] = hi - lo


@numba.njit(inline='always')
def record(hist, counts, rows, count, t):
    """Hold the spiking rows ``rows[:count]`` of step ``t`` (they deliver from step ``t + 1``)."""
    slot = np.int64(t) % np.int64(counts.shape[0])
    counts[slot] = count
    for a in range(count):
        hist[slot, a] = rows[a]


@numba.njit(inline='always')
def _runs(hist, counts, ends, indptr, splits, t, part, runs):
    """The non-empty runs of ``part`` arriving at step ``t``, in the order of the adds: ``(start, stop, d)``."""
    length = counts.shape[0]
    m = 0
    for d in range(length - 1, 0, -1):
        slot = (np.int64(t) - d) % length
        for a in range(counts[slot]):
            r = hist[slot, a]
            base = np.int64(indptr[r]) if part == 0 else np.int64(splits[r])
            lo, hi = base + np.int64(ends[r, part, d - 1]), base + np.int64(ends[r, part, d])
            if lo < hi:
                runs[m, 0], runs[m, 1], runs[m, 2] = lo, hi, d
                m += 1
    return m


@numba.njit(inline='always')
def _gather_part(hist, counts, ends, data, cols, indptr, splits, t, out, part, runs):
    m = _runs(hist, counts, ends, indptr, splits, t, part, runs)
    per_line = 64 // data.itemsize
    ahead, q = 0, runs[0, 0] if m else 0  # the run and synapse the next prefetch asks for
    lines = LINES_AHEAD
    for i in range(m):
        lines += (runs[i, 1] - runs[i, 0] + per_line - 1) // per_line  # as many as this run reads
        while lines > 0 and ahead < m:
            prefetch(data, q)
            prefetch(cols, q)
            lines -= 1
            q += per_line
            if q >= runs[ahead, 1]:
                ahead += 1
                if ahead < m:
                    q = runs[ahead, 0]
        for k in range(_U(runs[i, 0]), _U(runs[i, 1])):  # unsigned: no test for a negative index
            out[cols[k]] += data[k]


@numba.njit(inline='always')
def held(counts, t):
    """How many of the held spikes deliver at step ``t``: those of steps ``t - L + 1`` to ``t - 1``."""
    spikes = 0
    for d in range(1, counts.shape[0]):
        spikes += counts[(np.int64(t) - d) % counts.shape[0]]
    return spikes


@numba.njit(inline='always')
def gather_part(hist, counts, lay, t, inp, part, runs):
    """Add part ``part``'s synapses arriving at step ``t`` into its columns of ``inp`` (``lay``: the tuple of a
    :class:`Layout`'s arrays; ``runs``: scratch of ``(held(counts, t), 3)`` int64)."""
    data, cols, indptr, splits, ends, split = lay
    c = np.int64(split[0])
    out = inp[:c] if part == 0 else inp[c:]
    _gather_part(hist, counts, ends, data, cols, indptr, splits, t, out, part, runs)


@numba.njit(inline='always')
def gather(hist, counts, lay, t, inp):
    """Add the synapses arriving at step ``t`` into ``inp`` (zero where read last), two threads, a part each."""
    runs = np.empty((2, held(counts, t), 3), np.int64)
    if runs.shape[1] < PARALLEL_MIN_SPIKES:
        for part in range(2):
            gather_part(hist, counts, lay, t, inp, part, runs[part])
        return
    for part in numba.prange(2):
        gather_part(hist, counts, lay, t, inp, part, runs[part])


@numba.njit(parallel=True)
def _deliver(inp, hist, counts, spikes, data, cols, indptr, splits, ends, split, t, inp_out, hist_out, counts_out):
    slot = np.int64(t[0]) % np.int64(counts_out.shape[0])
    counts_out[slot] = event_rows(spikes, hist_out[slot])
    gather(hist_out, counts_out, (data, cols, indptr, splits, ends, split), np.int64(t[0]) + 1, inp_out[0])


_kernel = ej.XLACustomKernel('pd14_pull_deliver')
_kernel.def_numba_kernel(lambda outs: _deliver)


class Layout(NamedTuple):
    """The synapses as the delivery at read time reads them (a pytree of arrays; :func:`layout` builds it).

    ``data``, ``indptr``: the weights and row pointers; ``splits[r]``: where row ``r``'s second part begins;
    ``cols``: each synapse's column counted from its part's first column (``0`` or ``split[0]``), uint16
    where both parts are at most 2**16 columns wide (2 bytes a synapse read, not the packed offset's 4),
    else uint32; ``ends``: :func:`delay_ends`; ``split``: (1,) int32, the first column of the second parts.
    """

    data: jax.Array
    cols: jax.Array
    indptr: jax.Array
    splits: jax.Array
    ends: jax.Array
    split: jax.Array


def layout(W, splits, split_column):
    """The :class:`Layout` of a :class:`eventjax.DelayedCSR` whose rows are stored in two parts at ``splits``
    (:mod:`owner_split`): each row's synapses onto columns below ``split_column``, then the others, each part
    sorted by delay; every delay in ``[1, W.ring_length)``.

    Raises ValueError where a split lies outside its row, a synapse in the other part's columns or a delay
    outside the ring.

    Example:
        >>> # row 0: column 0 (delay 2) | column 1 (delay 1); split at synapse 1 and at column 1
        >>> W = ej.DelayedCSR(ej.CSRDelayLayout(jnp.array([1., 2.]), None, jnp.array([0, 2]), None,
        ...                                     jnp.array([4, 3], jnp.int32), shape=(1, 2), ring_length=3))
        >>> lay = layout(W, jnp.array([1]), 1)
        >>> lay.cols.tolist(), lay.cols.dtype, lay.ends.tolist()
        ([0, 0], dtype('uint16'), [[[0, 0, 1], [0, 1, 1]]])
    """
    n, length = W.shape[1], W.ring_length
    offsets = np.asarray(W.layout.offsets)
    indptr, starts = owner_split.check_split_bounds('layout()', W.layout.indptr, splits)
    split_column = int(split_column)
    if not 0 <= split_column <= n:
        raise ValueError(f'layout(): split_column must be in [0, {n}], got {split_column}.')
    ends = delay_ends(offsets, indptr, starts, n, length)
    wide = max(split_column, n - split_column) > 2 ** 16
    cols = network.aligned_empty(offsets.shape[0], np.uint32 if wide else np.uint16)  # JAX takes it, no copy
    cols[indptr[-1]:] = 0  # entries past the last row (padding) are never read
    misplaced = _part_columns(offsets, indptr, starts, n, split_column, cols)
    if misplaced:
        raise ValueError(f'layout(): {misplaced} synapses lie on the other side of split_column {split_column} '
                         "than their row's part; store each row's synapses onto columns below it first "
                         '(network.build_connectivity with split=True).')
    return Layout(W.layout.data, jax.device_put(cols, may_alias=True), W.layout.indptr, jnp.asarray(splits),
                  jnp.asarray(ends), jnp.array([split_column], jnp.int32))


@numba.njit(cache=True, parallel=True)
def _part_columns(offsets, indptr, splits, n, split, cols):
    misplaced = 0
    for r in numba.prange(indptr.shape[0] - 1):
        for k in range(indptr[r], indptr[r + 1]):
            c = np.int64(offsets[k]) % n
            below = k < splits[r]
            if below != (c < split):
                misplaced += 1
                c = split if below else 0  # a column that stays inside the part's half
            cols[k] = c if below else c - split
    return misplaced


def init_state(n, length, dtype):
    """``(inp, hist, counts)`` of a network of ``n`` neurons and delays below ``length``: no spike held."""
    return jnp.zeros((1, n), dtype), jnp.zeros((length, n), jnp.int32), jnp.zeros(length, jnp.int32)


def deliver(inp, hist, counts, spikes, lay, t):
    """Hold the spikes (bool, one per row) of step ``t`` and add into ``inp`` (1, n), zero where read, the
    synapses arriving at step ``t + 1``; returns ``(inp, hist, counts)``, updated in place (numba only).

    ``hist``, ``counts``: the spikes of the last ``L`` steps (:func:`init_state`); ``lay``: the
    :class:`Layout` of the synapses. ``inp`` is what the ring's slot of step ``t + 1`` would hold after
    :func:`owner_split.owner_split_deliver`, bit for bit.

    Example:
        >>> # row 0: column 0 (delay 2) | column 1 (delay 1); split at synapse 1
        >>> W = ej.DelayedCSR(ej.CSRDelayLayout(jnp.array([1., 2.]), None, jnp.array([0, 2]), None,
        ...                                     jnp.array([4, 3], jnp.int32), shape=(1, 2), ring_length=3))
        >>> lay = layout(W, jnp.array([1]), 1)
        >>> inp, hist, counts = deliver(*init_state(2, 3, jnp.float32), jnp.array([True]), lay, 0)
        >>> inp.tolist()  # at step 1: the delay-1 synapse
        [[0.0, 2.0]]
        >>> deliver(inp * 0, hist, counts, jnp.array([False]), lay, 1)[0].tolist()
        [[1.0, 0.0]]
    """
    outs = tuple(jax.ShapeDtypeStruct(x.shape, x.dtype) for x in (inp, hist, counts))
    t = jnp.asarray(t, jnp.int32).reshape(1)
    return _kernel(inp, hist, counts, spikes, *lay, t, outs=outs, input_output_aliases={0: 0, 1: 1, 2: 2},
                   backend='numba')
