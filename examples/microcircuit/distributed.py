"""PD14 on several processes (MPI or JAX's gloo): each owns a block of neurons and the synapses onto them.

    mpirun -n 2 python -m examples.microcircuit.distributed --scale 1 --t-sim 200 --t-presim 100 --drive dc
    python -m examples.microcircuit.distributed --processes 2 --scale 1 --t-sim 200 --t-presim 100 --drive dc
    python -m examples.microcircuit.distributed --processes 2 --scale 0.02 --t-sim 100 --drive poisson --check

The neurons are split in contiguous blocks (``eventjax.distributed.own_rows``,
padded to 32 so the spikes travel as whole words). Each process draws every
row of the network from the seed's streams and keeps the synapses onto its
own columns (:mod:`blocks`), owns its neurons' state and the ring that
feeds them, and each update: reads its ring slot, updates its neurons
(:mod:`neurons`, whose kernel also packs the spikes into words, one bit a
neuron), all-gathers the words of every process and delivers all of them
into its ring (:func:`owner_split.owner_split_deliver_words`). A delay is
at least one update, so the spikes are needed at the next update: the
exchange is every update. The Poisson drive draws the one-process run's
random words for all neurons (the same key and update index) and each
process keeps its own neurons' words. Every ring entry receives the same
adds in the same order as in one process, so the spikes are the
one-process run's, spike for spike (``--check`` compares them).

On a cluster start one process per host with ``--cluster`` (Slurm, Open MPI,
mpi4py, or ``JAX_COORDINATOR_ADDRESS``, ``EVENTJAX_NUM_PROCESSES`` and
``EVENTJAX_PROCESS_ID``). ``--processes N`` starts N on this machine on
JAX's gloo collectives, each with ``cores / N`` numba threads; under
``mpirun`` with the ``mpi`` extra the processes exchange by MPI instead,
each bound to its share of the cores (``eventjax.distributed.initialize``),
the faster exchange of the two.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tempfile
import time

import numpy as np

from examples.microcircuit import check_run, peak_rss_gb

ROOT = pathlib.Path(__file__).resolve().parents[2]  # the command's directory: examples/ is imported from there
MODULE = 'examples.microcircuit.distributed'


class BlockRunner:
    """Steps one process's block inside ``shard_map``; ``run(ms)`` continues from where the last call stopped."""

    def __init__(self, derived, block, drive, seed, dtype, backend='numba', interval=1):
        import jax
        import jax.numpy as jnp
        from jax.sharding import PartitionSpec as Spec

        from eventjax import distributed as ejd
        from examples.microcircuit import network, neurons, owner_split, simulation
        from examples.microcircuit import params as P

        self.jax = jax
        job = self.job = ejd.current()
        size, n, b = job.count, int(np.sum(derived.num_neurons)), block.width
        self.n, self.b, self.derived, self.block = n, b, derived, block
        if not 1 <= interval <= derived.delay_min:
            raise ValueError(f'BlockRunner: the exchange interval must lie in [1, {derived.delay_min}] steps (the '
                             f'shortest delay), got {interval}.')
        self.interval = interval
        length = block.max_delay + 1

        def own(x, fill=0):
            out = np.full(b, fill, np.asarray(x).dtype)
            out[:block.hi - block.lo] = x[block.lo:block.hi]
            return out

        pop_of, i_e, lam = simulation.neuron_parameters(derived, drive)
        constants, p20 = simulation.propagators()
        v0 = own(network.initial_potentials(derived, seed) - P.E_L).astype(dtype)  # padding rests at E_L
        index = np.int32 if block.offsets.size < 2 ** 31 else np.int64
        # The synapses are handed over without a copy (64-byte aligned, may_alias): 8 bytes a synapse, once.
        conn = [job.put(block.weights[None]), job.put(block.indptr.astype(index)[None]),
                job.put(block.offsets[None]), job.put(block.splits.astype(index)[None])]
        self.drive = job.put(own(i_e * p20).astype(dtype))
        poisson = lam is not None
        if poisson:
            conn += [job.put(simulation.threshold_table(derived, lam), Spec()), job.put(own(pop_of.astype(np.int32)))]
        self.conn = tuple(conn)
        key = jax.random.key(seed, impl='rbg')
        w_ext = jnp.asarray(derived.weight_ext, dtype)
        no_extra = jnp.zeros(0, dtype)

        def local_chunk(state, drive_, conn_, t0, steps):
            data, indptr, offsets, splits = (x[0] for x in conn_[:4])
            me = job.axis_index()

            def update(state, t):
                extra = no_extra
                if poisson:
                    # the one-process run's words for all n neurons, this process's b of them (padding: 0 counts)
                    u = jnp.pad(jax.random.bits(jax.random.fold_in(key, t), (n,), jnp.uint32), (0, size * b - n))
                    u = jax.lax.dynamic_slice(u, (me * b,), (b,))
                    extra = simulation.poisson_counts(u, *conn_[4:]).astype(dtype) * w_ext
                # the neuron kernel packs the spikes in its own pass: the exchange moves its words as they are
                state, spike, words = neurons.update(state, drive_, extra, t, constants, backend, packed=True)
                return state, (spike, words)

            def period(state, t1, k):
                # k updates, then one exchange of their spikes, delivered update by update: a spike of update t
                # lands in ring slot t + delay >= t + k, which no update of this period reads, so every ring
                # entry receives the same adds in the same order as with an exchange after each update.
                state, (spikes, own) = jax.lax.scan(update, state, t1 + jnp.arange(k, dtype=jnp.int32))
                words = job.all_gather(own.reshape(-1)).reshape(size, k, b // 32)
                if size > 1:
                    words = words.transpose(1, 0, 2)
                words = words.reshape(k, size * b // 32)
                v, i_syn, r, ring = state
                for j in range(k):
                    ring = owner_split.owner_split_deliver_words(ring, words[j], data, offsets, indptr, splits,
                                                                 t1 + j, backend)
                return (v, i_syn, r, ring), spikes

            whole, rest = divmod(steps, interval)
            starts = t0 + interval * jnp.arange(whole, dtype=jnp.int32)
            state, spikes = jax.lax.scan(lambda c, t1: period(c, t1, interval), state, starts)
            spikes = spikes.reshape(whole * interval, b)
            if rest:
                state, tail = period(state, t0 + whole * interval, rest)
                spikes = jnp.concatenate([spikes, tail])
            return state, spikes

        state_specs = (Spec('p'), Spec('p'), Spec('p'), Spec(None, 'p'))
        conn_specs = tuple(Spec() if i == 4 else Spec('p') for i in range(len(self.conn)))

        def chunk(state, drive_, conn_, t0, steps):
            # check_vma off: the custom kernels' outputs carry no varying-axis type, which scan's carry requires
            return job.program(lambda s, d, c, t: local_chunk(s, d, c, t, steps),
                               in_specs=(state_specs, Spec('p'), conn_specs, Spec()),
                               out_specs=(state_specs, Spec(None, 'p')), check_vma=False)(state, drive_, conn_, t0)

        self._chunk = jax.jit(chunk, static_argnums=4, donate_argnums=0)
        self.state = (job.put(v0), job.put(np.zeros(b, dtype)), job.put(np.zeros(b, np.int32)),
                      job.put(np.zeros((length, b), dtype), Spec(None, 'p')))
        self._scalar = lambda t: job.put(np.int32(t), Spec())
        self.t = 0

    def compile(self, steps=100):
        """Compile the chunk of ``steps`` updates ahead of the timed run; returns the seconds it took."""
        jax = self.jax
        start = time.perf_counter()
        abstract = jax.tree.map(lambda x: jax.ShapeDtypeStruct(x.shape, x.dtype, sharding=x.sharding),
                                (self.state, self.drive, self.conn, self._scalar(0)))
        self._chunk.lower(*abstract, steps).compile()
        return time.perf_counter() - start

    def run(self, ms, record=True, chunk_steps=100):
        """Advance ``ms``; returns ``(spike steps, global spike ids, wall seconds)`` of this process's neurons."""
        from examples.microcircuit import params as P
        from examples.microcircuit.simulation import raster_nonzero

        total = int(round(ms / P.DT))
        steps_out, ids_out = [], []
        def collect(raster, t):
            rows, ids = raster_nonzero(self.job.local(raster))
            steps_out.append(rows.astype(np.int64) + t)
            ids_out.append(ids.astype(np.int64) + self.block.lo)

        self.jax.block_until_ready(self.state)
        start = time.perf_counter()
        done, pending = 0, None
        while done < total:
            steps = min(chunk_steps, total - done)
            self.state, raster = self._chunk(self.state, self.drive, self.conn, self._scalar(self.t), steps)
            # the previous chunk's raster is read while this one runs: the host's work on it does not stop this
            # process between chunks while the others wait for it in the exchange
            if pending is not None:
                collect(*pending)
            pending = (raster, self.t) if record else None
            self.t += steps
            done += steps
        if pending is not None:
            collect(*pending)
        self.jax.block_until_ready(self.state)
        wall = time.perf_counter() - start
        cat = lambda xs: np.concatenate(xs) if xs else np.zeros(0, np.int64)  # noqa: E731
        return cat(steps_out), cat(ids_out), wall

    def time_exchange(self, steps=1000, repeat=3):
        """Seconds per update of the spike exchange alone (the all-gather of ``interval`` updates' packed words,
        as the step moves them), each needing the last; best of ``repeat``."""
        jax, job, k = self.jax, self.job, self.interval
        from jax.sharding import PartitionSpec as Spec

        def body(c, _):
            words = job.all_gather(c)
            return c ^ (words[-1] & 1), None

        periods = max(1, steps // k)
        exchange = jax.jit(job.program(lambda s: jax.lax.scan(body, s, None, length=periods)[0],
                                       in_specs=Spec('p'), out_specs=Spec('p')))
        words = job.put(np.arange(self.b * k // 32, dtype=np.uint32))
        jax.block_until_ready(exchange(words))  # compiled here (mpi4jax's ordered effects rule out AOT calls)
        best = float('inf')
        for _ in range(repeat):
            start = time.perf_counter()
            jax.block_until_ready(exchange(words))
            best = min(best, time.perf_counter() - start)
        return best / (periods * k)


def member(args, joined):
    """One process of the job: join, check, build its block, simulate, report (process 0 prints)."""

    from eventjax import distributed as ejd

    rank, size = ejd.initialize(init_timeout=args.init_timeout, heartbeat_timeout=args.heartbeat_timeout,
                                shutdown_timeout=args.heartbeat_timeout * 3) if joined else (0, 1)
    import eventjax as ej
    from examples.microcircuit import blocks
    from examples.microcircuit import params as P

    ej.set_backend('cpu', args.backend)
    ejd.check_job({'scale': args.scale, 'k_scale': args.k_scale, 'drive': args.drive, 'seed': args.seed,
                   't_sim': args.t_sim, 't_presim': args.t_presim, 'backend': args.backend, 'dtype': args.dtype,
                   'delay_min': args.delay_min, 'interval': args.interval}, MODULE)
    job = ejd.current()

    def gather(x):
        return job.allgather_host(np.asarray(x)).reshape(size, -1)

    say = print if rank == 0 else (lambda *a, **k: None)
    derived = P.derive(args.scale, args.k_scale if args.k_scale is not None else args.scale, args.drive,
                       args.delay_min)
    interval = args.interval or derived.delay_min
    n = int(derived.num_neurons.sum())
    b, rows = ejd.block_size(n, size, 32), ejd.own_rows(n, size, rank, 32)
    dtype = np.dtype(args.dtype)
    with ejd.collective_errors():
        start = time.perf_counter()
        draw = blocks.draw_block(derived, args.seed, rows.start, rows.stop, b, dtype)
        counts = gather([draw.nnz])[:, 0]
        block = draw.assemble(counts.max())  # one shape for every process's shard
        del draw
        runner = BlockRunner(derived, block, args.drive, args.seed, dtype, args.backend, interval)
        construction = time.perf_counter() - start
        compile_s = runner.compile()
        say(f'PD14 on {size} process(es) ({job.transport}): {n} neurons, {int(counts.sum())} synapses, '
            f'scale {args.scale:g} '
            f'(K {args.k_scale or args.scale:g}), {args.drive} drive, {args.backend}, {args.dtype}, '
            f'{os.environ.get("NUMBA_NUM_THREADS", "all")} numba thread(s) per process; delays >= '
            f'{derived.delay_min} step(s), an exchange every {interval}')
        for p in range(size):
            r = ejd.own_rows(n, size, p, 32)
            say(f'  process {p}: neurons [{r.start}, {r.stop}), {counts[p]} synapses')
        times = gather([construction])[:, 0]
        say(f'  construction     {times.max():8.2f} s   (slowest process; + compile {compile_s:.2f} s)')
        _, _, presim = runner.run(args.t_presim, record=False)
        say(f'  warm-up {args.t_presim:5.0f} ms {presim:8.2f} s')
        steps, ids, wall = runner.run(args.t_sim)
        say(f'  simulate {args.t_sim:4.0f} ms {wall:8.2f} s   RTF {wall / (args.t_sim * 1e-3):.2f}')
        exchange = runner.time_exchange(min(1000, max(1, int(round(args.t_sim / P.DT)))))
        say(f'  exchange         {exchange * 1e6:8.1f} us a step alone (all-gather of {interval * size * b // 8} '
            f'bytes every {interval} step(s), {interval * b // 8} from each process; best of 3)')
        rss = gather([peak_rss_gb()])[:, 0]
        say('  peak RSS         ' + '  '.join(f'process {p} {x:.2f} GB' for p, x in enumerate(rss)))
        per_pop = gather(np.bincount(np.searchsorted(np.cumsum(derived.num_neurons), ids, side='right'),
                                     minlength=8)).sum(axis=0)
        rates = per_pop / derived.num_neurons / (args.t_sim * 1e-3)
        say('  rates (Hz)       ' + '  '.join(f'{p} {r:.2f}' for p, r in zip(P.POPULATIONS, rates)))
        if args.json and rank == 0:
            steps_run = int(round(args.t_sim / P.DT))
            with open(args.json, 'w') as f:
                json.dump({'processes': size, 'transport': job.transport, 'neurons': n, 'synapses': int(counts.sum()),
                           'scale': args.scale, 'interval': interval, 'steps': steps_run, 'wall_s': wall,
                           'step_us': wall / steps_run * 1e6, 'exchange_us': exchange * 1e6,
                           'exchange_bytes': interval * size * b // 8, 'rtf': wall / (args.t_sim * 1e-3),
                           'threads': os.environ.get('NUMBA_NUM_THREADS', 'all')}, f, allow_nan=False)
        if args.spikes_dir:
            np.savez(os.path.join(args.spikes_dir, f'spikes_{rank}.npz'), steps=steps, ids=ids)
        gather([0])  # every process waits here, not at the shutdown barrier, until all have written
    return 0


def one_process_spikes(args):
    """The one-process run's spikes of the simulated time (``simulation.Runner``), as ``(steps, ids)``."""
    from examples.microcircuit import simulation

    model = simulation.build(args.scale, args.k_scale, args.drive, args.seed, np.dtype(args.dtype),
                             delay_min=args.delay_min)
    runner = simulation.Runner(model, args.backend, args.seed)
    runner.run(args.t_presim, 'warm-up', None, record=False)
    steps, ids, _ = runner.run(args.t_sim, 'simulate', None)
    return steps, ids.astype(np.int64)


def job_spikes(spikes_dir, processes):
    """The spikes every process of a job wrote, ordered by step then neuron."""
    parts = [np.load(os.path.join(spikes_dir, f'spikes_{p}.npz')) for p in range(processes)]
    steps = np.concatenate([p['steps'] for p in parts])
    ids = np.concatenate([p['ids'] for p in parts])
    order = np.lexsort((ids, steps))
    return steps[order], ids[order]


def same_spikes(a, b):
    """Whether two ``(steps, ids)`` spike lists hold the same spikes (each ordered by step, then neuron)."""
    order = np.lexsort((b[1], b[0]))
    return a[0].shape == b[0].shape and np.array_equal(a[0], b[0][order]) and np.array_equal(a[1], b[1][order])


def launch(argv, args, env=None):
    """Start the job on this machine (``--processes``); with ``--check`` compare with one process afterwards."""
    from eventjax import distributed as ejd

    env = dict(os.environ if env is None else env)
    env.setdefault('NUMBA_NUM_THREADS', str(max(1, (os.cpu_count() or 1) // args.processes)))
    env['JAX_PLATFORMS'] = 'cpu'
    with tempfile.TemporaryDirectory(prefix='pd14-spikes-') as tmp:
        spikes_dir = args.spikes_dir or (tmp if args.check else '')
        command = [sys.executable, '-m', MODULE, *argv] + (['--spikes-dir', tmp] if spikes_dir == tmp else [])
        code = ejd.launch(command, args.processes, timeout=args.timeout, grace=args.heartbeat_timeout * 3 + 10,
                          env=env, cwd=str(ROOT))
        if code or not args.check:
            return code
        start = time.perf_counter()
        same = same_spikes(job_spikes(spikes_dir, args.processes), one_process_spikes(args))
    print(f'  identical to the one-process run (spike for spike): {same} ({time.perf_counter() - start:.1f} s)')
    return 0 if same else 1


def parse(argv):
    parser = argparse.ArgumentParser(prog=f'python -m {MODULE}', description=__doc__.splitlines()[0])
    parser.add_argument('--processes', type=int, default=2, help='start this many processes on this machine')
    parser.add_argument('--cluster', action='store_true', help='join a job started by a launcher')
    parser.add_argument('--scale', type=float, default=0.1, help='N_scaling (and K_scaling unless --k-scale)')
    parser.add_argument('--k-scale', type=float, default=None, help='K_scaling (default: --scale)')
    parser.add_argument('--t-sim', type=float, default=1000.0, help='model time after the warm-up (ms)')
    parser.add_argument('--t-presim', type=float, default=500.0, help='warm-up (ms, default 500)')
    parser.add_argument('--drive', choices=('dc', 'poisson'), default='dc')
    parser.add_argument('--backend', choices=('numba',), default='numba')
    parser.add_argument('--dtype', choices=('float32', 'float64'), default='float32')
    parser.add_argument('--seed', type=int, default=55)
    parser.add_argument('--delay-min', type=int, default=1,
                        help="the shortest delay in steps (the reference's: 1); 2 lets the processes exchange "
                             'every second step')
    parser.add_argument('--interval', type=int, default=0,
                        help='exchange every this many steps, at most --delay-min (default: --delay-min)')
    parser.add_argument('--check', action='store_true', help='then run one process and compare the spikes')
    parser.add_argument('--spikes-dir', default='', help='each process writes spikes_<id>.npz here')
    parser.add_argument('--json', default='', help="process 0 writes the run's figures to this file")
    parser.add_argument('--init-timeout', type=int, default=120, help='seconds to wait for all processes')
    parser.add_argument('--heartbeat-timeout', type=int, default=30, help='seconds before a silent process is dead')
    parser.add_argument('--timeout', type=float, default=3600.0, help='with --processes: kill everything after this')
    args = parser.parse_args(argv)
    check_run(parser, args)
    if args.processes < 1:
        parser.error(f'--processes must be at least 1, got {args.processes}.')
    if args.delay_min < 1:
        parser.error(f'--delay-min must be at least 1 step, got {args.delay_min}.')
    if not 0 <= args.interval <= args.delay_min:
        parser.error(f'--interval must lie in [1, --delay-min={args.delay_min}] (0: --delay-min), got {args.interval}.')
    if args.dtype == 'float64':
        parser.error('--dtype float64 is not supported across processes yet; use float32.')
    return args


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse(argv)
    from eventjax import distributed as ejd

    joined = ejd.is_member(args.cluster)
    if not joined:
        return launch(argv, args)
    return ejd.run_member(member, args, joined)


if __name__ == '__main__':
    raise SystemExit(main())
