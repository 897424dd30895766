"""PD14's delivery, push (into the ring, :mod:`owner_split`) against pull (at read time, :mod:`pull`), alone.

``python -m examples.microcircuit.bench_delivery --scale 1 --t-presim 100 --ms 100 --threads 1 2 --pairs 3``

Builds the network once, runs it (``--t-presim`` warm-up, then ``--ms``
recorded) and replays the recorded spikes through each delivery, in turns
(push, pull, push, pull, ... for each thread count), each replay one numba
call looping over the steps. A step is what the simulation's numba step
does around the neuron update: push reads and clears the ring's slot of
the step and delivers the step's spikes into the ring; pull sums the
synapses arriving now into the input vector, reads and clears it, and
holds the step's spikes. Both take the spikes as row lists (the step's
compaction of the flags is the same for both and left out).

Prints per replay the wall and process CPU time per step, the nanoseconds
per synaptic event (wall and CPU), and the load average beside it; first
checks that both read the same inputs, bit for bit, over ``--check-steps``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numba
import numpy as np

from eventjax.backends.numba import threading_layer
from examples.microcircuit import owner_split, pull

_deliver_rows = owner_split._deliver_rows


@numba.njit(parallel=True)
def _push_run(ring, step_ptr, step_rows, data, offsets, indptr, splits, cur, keep):
    length = ring.shape[0]
    t = np.zeros(1, np.int64)
    for i in range(step_ptr.shape[0] - 1):
        row = ring[i % length]
        if i < keep.shape[0]:
            keep[i] = row
        cur[:] = row  # the neuron update's read of the slot, and its clear
        row[:] = 0
        t[0] = i
        rows = step_rows[step_ptr[i]:step_ptr[i + 1]]
        _deliver_rows(rows, rows.shape[0], data, offsets, indptr, splits, t, ring)


@numba.njit(parallel=True)
def _pull_run(inp, hist, counts, lay, step_ptr, step_rows, cur, keep):
    for i in range(step_ptr.shape[0] - 1):
        pull.gather(hist, counts, lay, i, inp)
        if i < keep.shape[0]:
            keep[i] = inp
        cur[:] = inp
        inp[:] = 0
        rows = step_rows[step_ptr[i]:step_ptr[i + 1]]
        pull.record(hist, counts, rows, rows.shape[0], i)


class Replay:
    """The recorded spikes and the synapses, with a fresh state for each replay."""

    def __init__(self, model, steps, ids, n_steps):
        lay = model.W.layout
        self.data, self.offsets = np.asarray(lay.data), np.asarray(lay.offsets)
        self.indptr, self.splits = np.asarray(lay.indptr).astype(np.int64), np.asarray(model.splits).astype(np.int64)
        self.n, self.length = model.n, model.W.ring_length
        self.lay = tuple(np.asarray(x) for x in pull.layout(model.W, model.splits, model.split_column))
        order = np.lexsort((ids, steps))
        self.step_rows = ids[order].astype(np.int64)
        self.step_ptr = np.searchsorted(steps[order], np.arange(n_steps + 1)).astype(np.int64)
        self.cap = max(1, int(np.diff(self.step_ptr).max()))
        self.events = int(np.diff(self.indptr)[self.step_rows].sum())
        self.n_steps = n_steps
        self.cur = np.zeros(self.n, self.data.dtype)

    def run(self, kind, keep_steps=0):
        keep = np.zeros((keep_steps, self.n), self.data.dtype)
        if kind == 'push':
            ring = np.zeros((self.length, self.n), self.data.dtype)
            args = (ring, self.step_ptr, self.step_rows, self.data, self.offsets, self.indptr, self.splits)
            fn = _push_run
        else:
            hist = np.zeros((self.length, self.cap), np.int64)
            counts = np.zeros(self.length, np.int64)
            args = (np.zeros(self.n, self.data.dtype), hist, counts, self.lay, self.step_ptr, self.step_rows)
            fn = _pull_run
        wall, cpu = time.perf_counter(), time.process_time()
        fn(*args, self.cur, keep)
        return time.perf_counter() - wall, time.process_time() - cpu, keep


def record(scale, k_scale, t_presim, ms, seed):
    """Build PD14 and run it: ``(model, spike steps from 0, spike ids, steps)``."""
    from examples.microcircuit import simulation

    model = simulation.build(scale, k_scale, 'dc', seed)
    runner = simulation.Runner(model, 'numba', seed)
    runner.run(t_presim, progress=None, record=False)
    t0 = runner.t
    steps, ids, _ = runner.run(ms, progress=None)
    n_steps = runner.t - t0
    del runner
    return model, steps - t0, ids, n_steps


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--scale', type=float, default=1.0)
    parser.add_argument('--k-scale', type=float, default=None)
    parser.add_argument('--t-presim', type=float, default=100.0)
    parser.add_argument('--ms', type=float, default=100.0, help='model time recorded and replayed')
    parser.add_argument('--threads', type=int, nargs='+', default=[1, 2])
    parser.add_argument('--pairs', type=int, default=3, help='push/pull pairs per thread count')
    parser.add_argument('--check-steps', type=int, default=200)
    parser.add_argument('--seed', type=int, default=55)
    args = parser.parse_args(argv)
    if args.pairs < 1 or args.ms <= 0 or any(t < 1 or t > numba.config.NUMBA_NUM_THREADS for t in args.threads):
        parser.error(f'--pairs and --ms must be positive and each of --threads in [1, '
                     f'{numba.config.NUMBA_NUM_THREADS}] (numba\'s threads).')
    threading_layer()
    start = time.perf_counter()
    model, steps, ids, n_steps = record(args.scale, args.k_scale, args.t_presim, args.ms, args.seed)
    rp = Replay(model, steps, ids, n_steps)
    del model
    print(f'PD14 scale {args.scale:g}: {rp.n} neurons, {rp.indptr[-1]:,} synapses, ring {rp.length} slots; '
          f'{rp.step_rows.size} spikes, {rp.events:,} synaptic events in {n_steps} steps '
          f'({rp.events / n_steps:,.0f} a step); recorded in {time.perf_counter() - start:.1f} s', flush=True)
    if rp.events == 0:
        print(f'bench_delivery: no synaptic event in the {n_steps} recorded steps, nothing to time; raise --scale '
              'or --ms.', file=sys.stderr)
        return 2
    check = min(args.check_steps, n_steps)
    same = np.array_equal(rp.run('push', check)[2], rp.run('pull', check)[2])
    print(f'  inputs of the first {check} steps bit for bit the same: {same}', flush=True)
    if not same:
        return 1
    print(f'  {"threads":>7} {"kind":>5} {"wall us/step":>13} {"cpu us/step":>12} {"wall ns/ev":>11} '
          f'{"cpu ns/ev":>10}  load (1 min)')
    per = {}
    for threads in args.threads:
        numba.set_num_threads(threads)
        for _ in range(args.pairs):
            for kind in ('push', 'pull'):
                wall, cpu, _ = rp.run(kind)
                per.setdefault((threads, kind), []).append((wall, cpu))
                print(f'  {threads:>7} {kind:>5} {wall / n_steps * 1e6:13.1f} {cpu / n_steps * 1e6:12.1f} '
                      f'{wall / rp.events * 1e9:11.2f} {cpu / rp.events * 1e9:10.2f}  {os.getloadavg()[0]:.2f}',
                      flush=True)
    for threads in args.threads:
        (push_wall, push_cpu), (pull_wall, pull_cpu) = (np.median(per[threads, k], axis=0) for k in ('push', 'pull'))
        print(f'  {threads} thread(s), medians: pull/push wall a step {pull_wall / push_wall:.3f}, '
              f'CPU a step {pull_cpu / push_cpu:.3f}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
