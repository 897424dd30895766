"""Where a PD14 step's time goes: each part of the update timed alone on the network's own spikes.

``python -m examples.microcircuit.profile --scale 0.1 --k-scale 1 --backend numba [--drive poisson]``

Runs the network (warm-up, then ``--steps`` updates recorded as a raster),
then times, each as its own jitted ``lax.scan`` over those recorded spikes:
the neuron update (propagators, refractoriness, threshold; on numba the
one pass that also reads and clears the step's input), the spike
compaction (``compact_events``, which the simulation no longer does: it
hands the raster to the host), the delivery (on numba at read time,
:mod:`pull`: the step's spikes held and the next step's input summed; else
into the ring, ``DelayedCSR.deliver``), the ring's read and clear (XLA),
and the Poisson drive; and the whole step as the simulation runs it. Prints microseconds per step
and seconds per model second, beside the synaptic events delivered.
"""

from __future__ import annotations

import argparse
import time

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej
from eventjax.kernels.delay import pallas_tpu_pull
from examples.microcircuit import neurons, owner_split, pull, simulation
from examples.microcircuit import params as P


def timed(fn, *args, repeats=2):
    """Best wall time of ``fn(*args)`` (compiled first)."""
    jax.block_until_ready(fn(*args))
    best = np.inf
    for _ in range(repeats):
        start = time.perf_counter()
        jax.block_until_ready(fn(*args))
        best = min(best, time.perf_counter() - start)
    return best


def profile(model, runner, raster, backend):
    """``{part: seconds for len(raster) steps}`` on the recorded ``raster`` (steps, N) bool."""
    n, steps = model.n, raster.shape[0]
    W, length = model.W, model.W.ring_length
    dtype = model.dtype
    ts = jnp.arange(steps, dtype=jnp.int32) + runner.t
    raster = jnp.asarray(raster)
    zeros = jnp.zeros(n, dtype)

    def scan(body, init, xs):
        return jax.lax.scan(body, init, xs)[0]

    @jax.jit
    def neurons_xla(v):
        def body(c, _):
            v, i, r = c
            free = r == 0
            v = jnp.where(free, v * dtype.type(0.99) + i * dtype.type(1e-4) + dtype.type(1e-3), v)
            r = jnp.where(free, r, r - 1)
            i = i * dtype.type(0.8)
            spike = v >= dtype.type(15.0)
            return (jnp.where(spike, dtype.type(0.0), v), i, jnp.where(spike, 20, r)), None
        return scan(body, (v, zeros, jnp.zeros(n, jnp.int32)), ts)[0]

    @jax.jit
    def compaction(raster):
        def body(c, s):
            ids, count = ej.compact_events(s, max(64, n // 20))
            return c + count + ids[0], None
        return scan(body, jnp.int32(0), raster)

    split = backend == 'numba' and model.splits is not None
    pulled = runner.delivery == 'pull' and backend == 'numba'
    tpu_pulled = runner.delivery == 'pull' and backend == 'pallas'

    @jax.jit
    def delivery(ring, W, splits, raster):
        def body(ring, x):
            t, s = x
            if pulled:  # as the simulation delivers: ring = (input, spiking rows, their counts); splits: the layout
                return pull.deliver(*ring, s, splits, t), None
            if tpu_pulled:  # ring = (spiking rows, dropped, input sum); splits: (weights, offsets, bounds)
                inp = pallas_tpu_pull.pull_input(*splits, ring[0], t, columns=W.shape[1],
                                                 groups=pallas_tpu_pull.groups_for(W.shape[1]),
                                                 interpret=jax.default_backend() != 'tpu')
                return (*pallas_tpu_pull.record(*ring[:2], s, t), ring[2] + inp), None
            if split:  # two threads, each its part of every row
                return owner_split.owner_split_deliver(ring, s, W, splits, t), None
            return W.deliver(ring, s, t, backend=backend), None
        return scan(body, ring, (ts, raster))

    @jax.jit
    def ring_read_clear(ring, acc):
        def body(c, t):
            ring, acc = c
            slot = t % length
            acc = acc + ring[slot]
            # the clear written from the read (acc * 0) so that XLA orders the read first and copies nothing
            return (ring.at[slot].set(acc * dtype.type(0)), acc), None
        return scan(body, (ring, acc), ts)

    @jax.jit
    def fused_update(state):
        return scan(lambda s, t: (neurons.update(s, zeros, zeros[:0], t, runner.constants)[0], None), state, ts)

    if backend == 'numba':  # as the simulation runs it: one numba pass, the ring's slot read and cleared too
        state = (zeros, zeros, jnp.zeros(n, jnp.int32), jnp.zeros_like(runner.state[3]))  # the ring, or the input
        parts = {'neurons + input read': timed(fused_update, state)}
    else:
        parts = {'neuron update': timed(neurons_xla, zeros)}
    parts['(spike compaction)'] = timed(compaction, raster)
    ring = pull.init_state(n, length, dtype) if pulled else W.init_ring(length)
    if tpu_pulled:
        groups = pallas_tpu_pull.groups_for(W.shape[1])
        inputs = groups * pallas_tpu_pull.group_rows(W.shape[1], groups) * 128
        ring = (*pallas_tpu_pull.init_spikes(length, runner.max_spikes, n), jnp.zeros(inputs, jnp.float32))
    parts['delivery'] = timed(delivery, ring, W, runner.args[0] if pulled or tpu_pulled else runner.args[1], raster)
    if backend != 'numba' and not tpu_pulled:
        parts['ring read + clear'] = timed(ring_read_clear, W.init_ring(length), jnp.zeros(W.shape[1], dtype))
    if model.lam is not None:
        key = jax.random.key(0, impl='rbg')

        @jax.jit
        def bits(acc):
            return scan(lambda acc, t: (acc ^ jax.random.bits(jax.random.fold_in(key, t), (n,), jnp.uint32), None),
                        acc, ts)

        @jax.jit
        def drive(acc, table, pop_of):
            def body(acc, t):
                u = jax.random.bits(jax.random.fold_in(key, t), (n,), jnp.uint32)
                return acc + simulation.poisson_counts(u, table, pop_of).astype(dtype), None
            return scan(body, acc, ts)

        parts['Poisson drive'] = timed(drive, zeros, *simulation.poisson_table(model))
        parts['(its random words)'] = timed(bits, jnp.zeros(n, jnp.uint32))
    return parts


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--scale', type=float, default=0.1)
    parser.add_argument('--k-scale', type=float, default=None)
    parser.add_argument('--drive', choices=('dc', 'poisson'), default='dc')
    parser.add_argument('--backend', default='numba')
    parser.add_argument('--delivery', choices=('pull', 'push'), default=None,
                        help="numba and pallas: at read time ('pull') or into the ring ('push'); default: as "
                             "the simulation runs (pull on numba, push elsewhere)")
    parser.add_argument('--steps', type=int, default=1000)
    parser.add_argument('--t-presim', type=float, default=200.0)
    parser.add_argument('--seed', type=int, default=55)
    args = parser.parse_args(argv)
    pallas = args.backend == 'pallas'  # as the command builds it: rows in one part, whole tiles and 128-column rows
    model = simulation.build(args.scale, args.k_scale, args.drive, args.seed, np.float32, split=not pallas,
                             whole_tiles=pallas, column_multiple=128 if pallas else 1,
                             sort_rows=pallas and args.delivery == 'pull')
    runner = simulation.Runner(model, args.backend, args.seed, args.delivery)
    runner.run(args.t_presim, progress=None, record=False)
    t0 = runner.t
    runner.compile(args.steps)
    start = time.perf_counter()
    steps, ids, _ = runner.run(args.steps * P.DT, progress=None)
    whole = time.perf_counter() - start
    raster = np.zeros((args.steps, model.n), bool)
    raster[steps - t0, ids] = True
    row_len = np.diff(np.asarray(model.W.indptr))
    events = int(row_len[ids].sum())
    parts = profile(model, runner, raster, args.backend)
    per_s = 1e4 / args.steps  # steps per model second / steps timed
    print(f'PD14 profile: {model.n} neurons, {model.nnz} synapses, {args.backend} ({runner.delivery}), {args.drive}; '
          f'{ids.size} spikes and {events:,} synaptic events in {args.steps} steps '
          f'({events * per_s:.3g} per model second)')
    print(f'  {"part":<20} {"us/step":>10} {"s per model s":>14}')
    total = sum(v for k, v in parts.items() if not k.startswith('('))
    for name, sec in [*parts.items(), ('sum of the parts', total), ('whole step (run)', whole)]:
        print(f'  {name:<20} {sec / args.steps * 1e6:10.1f} {sec * per_s:14.3f}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
