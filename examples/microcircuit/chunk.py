"""PD14 on numba, a chunk of updates in one kernel call: the neuron update, the spikes held and the next
step's input summed at read time (:mod:`pull`), step after step, with the spikes returned as bits.

Run as a ``lax.scan`` of two numba calls a step (the neuron update, then
the delivery), a full-scale step spent ~50 us of its ~290 between them: the
scan's own work, two calls through XLA, the spike flags written out and
read back. Here one call runs the chunk, on two threads in one parallel
run (starting a run costs ~5 us; two a step were 10 us of ~160). Thread
``p`` owns part ``p`` of the columns (:mod:`owner_split`) step after step:
it sums the part's arriving synapses into its columns, updates the part's
neurons (over slices: a loop numba vectorises; refractory counts may be
bytes, the drive is read per run of equal values) and lists their spikes;
the second part to finish a step holds the step's spikes, and the next
step's deliveries wait for that hold alone (:func:`_steps_shared`). The
spikes leave as bitpack's words, 32 neurons a word, an eighth of the flags
the host reads back.

The arithmetic is the scan's, operation for operation (:func:`neurons.advance`,
:func:`pull.gather`): the same spikes, bit for bit.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numba
import numpy as np

import eventjax as ej
from eventjax.backends.numba import atomic_add, compare_swap, load_acquire, wait_at_least
from eventjax.kernels.common.numba.scatter import event_rows
from examples.microcircuit import neurons, pull

# fewer neurons: one thread updates them all (waking the other costs more than half the update)
PARALLEL_MIN_NEURONS = 16_384


@numba.njit(inline='always')
def _advance_all(v, i_syn, r, row, drive, extra, spiked, k):
    # over slices from 0: an index numba knows is not negative needs no wraparound test, and the loop
    # (a flag per neuron, no branch out of it) vectorises; over range(lo, hi) of the whole arrays it ran 2.5x slower
    c22, c21, c11, th, reset, ref = k
    poisson = extra.shape[0] != 0
    for j in range(v.shape[0]):
        x = row[j] + extra[j] if poisson else row[j]
        row[j] = 0
        v[j], i_syn[j], r[j], spiked[j] = neurons.advance(v[j], i_syn[j], r[j], x, drive, c22, c21, c11, th,
                                                          reset, ref)


@numba.njit(inline='always')
def _advance(v, i_syn, r, row, drive, extra, spiked, k, lo, hi):
    """Update neurons ``[lo, hi)`` by the input in ``row`` (then zero), their spikes into ``spiked``;
    ``drive = (bounds, values)``: neurons ``[bounds[g], bounds[g + 1])`` have the drive ``values[g]``."""
    bounds, values = drive
    for g in range(values.shape[0]):
        a, b = max(lo, bounds[g]), min(hi, bounds[g + 1])
        if a < b:
            _advance_all(v[a:b], i_syn[a:b], r[a:b], row[a:b], values[g], extra[a:b] if extra.shape[0] else extra,
                         spiked[a:b], k)


_LINE = 8  # int64s a cache line: each shared counter on its own


@numba.njit(inline='always')
def _set_bits(held, k, bits):
    bits[:] = 0
    for a in range(k):
        j = held[a]
        bits[j >> 5] |= np.uint32(1) << np.uint32(j & 31)


@numba.njit(inline='always')
def _hold(spiked, hist, counts, t, bits):
    """Hold step ``t``'s spiking rows (they deliver from ``t + 1``) and set their bits."""
    held = hist[np.int64(t) % counts.shape[0]]
    k = event_rows(spiked, held)
    counts[np.int64(t) % counts.shape[0]] = k
    _set_bits(held, k, bits)


@numba.njit(inline='always')
def _hold_found(lists, found, c, hist, counts, t, bits):
    """:func:`_hold` of the spikes each part's update found: ``lists[p, :found[p * _LINE]]``, part 1's counted
    from column ``c``."""
    held = hist[np.int64(t) % counts.shape[0]]
    k0, k1 = found[0], found[_LINE]
    held[:k0] = lists[0, :k0]
    for a in range(k1):
        held[k0 + a] = lists[1, a] + c
    counts[np.int64(t) % counts.shape[0]] = k0 + k1
    _set_bits(held, k0 + k1, bits)


@numba.njit  # its own function: inlined where it is called, the chunk's kernel took 28 s to compile
def _part_step(v, i_syn, r, row, drive, extra, no_extra, spiked, k, hist, counts, lay, t0, words, c, n, lists,
               found, sync, p, s):
    """Part ``p``'s piece of step ``s``: its synapses arriving at ``t + 1`` summed, its neurons updated and
    its spikes listed; the second part to finish a step also holds the step's spikes."""
    steps = words.shape[0]
    t = np.int64(t0) + s
    more = s + 1 < steps
    runs = np.empty((pull.held(counts, t + 1), 3), np.int64)
    pull.gather_part(hist, counts, lay, t + 1, row, p, runs)
    if more:
        x = extra[s + 1] if extra.shape[0] else no_extra
        lo, hi = (0, c) if p == 0 else (c, n)
        _advance(v, i_syn, r, row, drive, x, spiked, k, lo, hi)
        found[p * _LINE] = event_rows(spiked[lo:hi], lists[p])
    if atomic_add(sync, 3 * _LINE, 1) == 2 * s + 1 and more:  # parts finished: both of step s now
        _hold_found(lists, found, c, hist, counts, t + 1, words[s + 1])
        atomic_add(sync, 4 * _LINE, 1)


@numba.njit(inline='always')
def _steps_shared(v, i_syn, r, row, drive, extra, no_extra, spiked, k, hist, counts, lay, t0, words, c, n):
    """The chunk's steps on two threads in one parallel run (not two runs a step: a run's start costs ~5 us,
    a step ~130). Thread ``p`` sums and updates part ``p`` step after step (its inputs and neurons stay in its
    core's cache; a part's inputs are written by its own delivery alone); a step waits for the last step's
    hold, which the second part to finish a step does. A piece is claimed only once it can run, and a
    thread takes the other part's piece that the hold it waits for needs if nobody has claimed it: where
    the other thread is late, descheduled or never started (a runtime may run both loops on one thread),
    this one does every piece in order and never waits for itself."""
    steps = words.shape[0]
    # [0], [_LINE]: the next step of part 0 and of part 1 to claim; [3 _LINE]: parts finished; [4 _LINE]: holds
    sync = np.zeros(5 * _LINE, np.int64)
    lists = np.empty((2, max(c, n - c)), np.int64)
    found = np.zeros(2 * _LINE, np.int64)
    for w in numba.prange(2):
        p = np.int64(w)  # the loop's index may be unsigned: 1 - p would be a float
        while True:
            x = p if load_acquire(sync, p * _LINE) < steps else 1 - p  # this thread's part, then the other's
            s = load_acquire(sync, x * _LINE)
            if s >= steps:
                break
            if s > 0:
                y = 1 - x
                if compare_swap(sync, y * _LINE, s - 1, s) == s - 1:  # the hold of s - 1 needs it
                    _part_step(v, i_syn, r, row, drive, extra, no_extra, spiked, k, hist, counts, lay, t0, words,
                               c, n, lists, found, sync, y, s - 1)
                wait_at_least(sync, 4 * _LINE, s)
            if compare_swap(sync, x * _LINE, s, s + 1) == s:
                _part_step(v, i_syn, r, row, drive, extra, no_extra, spiked, k, hist, counts, lay, t0, words, c, n,
                           lists, found, sync, x, s)


def _numba_kernel(outs, p22, p21, p11, theta, v_reset, ref, parallel_min):
    @numba.njit(parallel=True)
    def kernel(v, i_syn, r, inp, hist, counts, bounds, values, extra, t0, data, cols, indptr, splits, ends, split,
               v_out, i_out, r_out, inp_out, hist_out, counts_out, words):
        dt = v_out.dtype.type
        k = (dt(p22), dt(p21), dt(p11), dt(theta), dt(v_reset), ref)
        n, steps = v_out.shape[0], words.shape[0]
        c = np.int64(split[0])
        lay = (data, cols, indptr, splits, ends, split)
        drive = (bounds, values)
        row = inp_out[0]
        no_extra = extra[0:0, 0]
        parallel = n >= parallel_min
        spiked = np.zeros(n, np.bool_)
        # step t0's input is summed (by the last chunk): update and hold t0, then per step each part's synapses
        # arriving at t + 1 summed into its columns, each part's neurons updated, the spikes of all held
        if steps:
            _advance(v_out, i_out, r_out, row, drive, extra[0] if extra.shape[0] else no_extra, spiked, k, 0, n)
            _hold(spiked, hist_out, counts_out, t0[0], words[0])
        if parallel:
            _steps_shared(v_out, i_out, r_out, row, drive, extra, no_extra, spiked, k, hist_out, counts_out, lay,
                          t0[0], words, c, n)
            return
        for s in range(steps):
            t = np.int64(t0[0]) + s
            more = s + 1 < steps
            x = extra[s + 1] if more and extra.shape[0] else no_extra
            runs = np.empty((pull.held(counts_out, t + 1), 3), np.int64)
            for part in range(2):
                pull.gather_part(hist_out, counts_out, lay, t + 1, row, part, runs)
            if more:
                _advance(v_out, i_out, r_out, row, drive, x, spiked, k, 0, n)
                _hold(spiked, hist_out, counts_out, t + 1, words[s + 1])

    return kernel


_kernel = ej.XLACustomKernel('pd14_chunk')
_kernel.def_numba_kernel(_numba_kernel)


def run(state, drive, extra, lay, t0, steps, constants):
    """``steps`` updates of ``state = (v, i_syn, r, inp, hist, counts)`` (``inp, hist, counts``:
    :func:`pull.init_state`) from step ``t0``, in place; returns ``(state, words)``, ``words`` (steps,
    ceil(n / 32)) uint32 with bit ``j % 32`` of word ``j // 32`` set where neuron ``j`` spiked.

    ``drive``: :func:`drive_runs` of ``I_e * P20`` per neuron (PD14's: one run per population); ``extra``:
    (steps, n) more input per neuron and step (the Poisson drive), or (0, n); ``lay``: :func:`pull.layout`;
    ``constants``: as :func:`neurons.update`'s.

    Example:
        >>> W = ej.DelayedCSR(ej.CSRDelayLayout(jnp.array([20., 20.]), None, jnp.array([0, 1, 2]), None,
        ...                                     jnp.array([3, 4], jnp.int32), shape=(2, 2), ring_length=3))
        >>> lay = pull.layout(W, jnp.array([0, 2]), 1)  # row 0 -> neuron 1 (1 step), row 1 -> neuron 0 (2)
        >>> k = dict(p22=1.0, p21=1.0, p11=0.0, theta=1.0, v_reset=0.0, ref=0)
        >>> state = (jnp.array([0.0, 0.0]), jnp.zeros(2), jnp.zeros(2, jnp.int32), *pull.init_state(2, 3, jnp.float32))
        >>> state, words = run(state, drive_runs(jnp.array([1.0, 0.0])), jnp.zeros((0, 2)), lay, 0, 5, k)
        >>> words[:, 0].tolist()  # 0 fires each step; its synapse reaches 1 at step 1, whose current fires it at 2
        [1, 1, 3, 3, 3]
    """
    n = state[0].shape[0]
    outs = tuple(jax.ShapeDtypeStruct(x.shape, x.dtype) for x in state)
    outs += (jax.ShapeDtypeStruct((steps, -(-n // 32)), jnp.uint32),)
    t0 = jnp.asarray(t0, jnp.int32).reshape(1)
    *new, words = _kernel(*state, *drive, extra, t0, *lay, outs=outs,
                          input_output_aliases={i: i for i in range(6)}, backend='numba',
                          parallel_min=PARALLEL_MIN_NEURONS, **constants)
    return tuple(new), words


def drive_runs(drive):
    """``(bounds (S + 1,) int64, values (S,))``: the runs of equal values of ``drive`` (n,), in order.

    Example:
        >>> [x.tolist() for x in drive_runs(jnp.array([2.0, 2.0, 5.0]))]
        [[0, 2, 3], [2.0, 5.0]]
    """
    drive = np.asarray(drive)
    starts = np.flatnonzero(np.r_[True, drive[1:] != drive[:-1]]) if drive.size else np.zeros(0, np.int64)
    return jnp.asarray(np.r_[starts, drive.size].astype(np.int64)), jnp.asarray(drive[starts])


@numba.njit(cache=True, nogil=True)
def word_hits(words, n):
    """``(steps, ids)`` of the set bits of ``words`` (steps, ceil(n / 32)) uint32, in order; a zero word costs
    one test.

    Example:
        >>> word_hits(np.array([[5], [0], [2 ** 31]], np.uint32), 32)
        (array([0, 0, 2]), array([ 0,  2, 31]))
    """
    total = 0
    for s in range(words.shape[0]):
        for w in range(words.shape[1]):
            x = np.uint64(words[s, w])
            while x:
                total += 1
                x &= x - np.uint64(1)
    steps, ids = np.empty(total, np.int64), np.empty(total, np.int64)
    k = 0
    for s in range(words.shape[0]):
        for w in range(words.shape[1]):
            x = words[s, w]
            if x == 0:
                continue
            for b in range(32):
                if (x >> np.uint32(b)) & np.uint32(1) and 32 * w + b < n:
                    steps[k], ids[k] = s, 32 * w + b
                    k += 1
    return steps[:k], ids[:k]
