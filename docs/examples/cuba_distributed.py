"""The CUBA network of cuba.py with its neurons split over several processes (by MPI, or JAX's multi-process runtime).

Each process owns a contiguous block of neurons and holds only the synapses
onto them, which it generates itself: target ``j``'s inputs are drawn from a
generator keyed by ``(seed, projection, j // 512)``, so the blocks of any
number of processes add up to the one-process matrix (drawn differently from
cuba.py's, whose dense mask costs neurons squared). Each step a process
advances its own neurons, the spike vectors are all-gathered over the global
mesh inside ``shard_map`` (one bit per neuron), and each process adds up the
spikes arriving at its neurons with ``binary_csrmv`` (``--conn csr``: each
pair connected with probability ``80 / neurons``, 2% at cuba.py's 4,000
neurons) or ``binary_fcnmv`` (``--conn fcn``: exactly 64 excitatory and 16
inhibitory inputs per neuron). Dynamics and parameters are cuba.py's.

    python docs/examples/cuba_distributed.py --processes 2 --check   # 2 processes here; compare with 1
    python docs/examples/cuba_distributed.py --processes 2 --neurons 100000 --conn fcn --bench

Under ``mpirun -n P python docs/examples/cuba_distributed.py`` the spikes
travel by MPI (the ``mpi`` extra). On a cluster start one process per host
(or per GPU) with ``--cluster``: JAX finds its place under Slurm, Open MPI
or mpi4py; any other launcher sets
``JAX_COORDINATOR_ADDRESS``, ``EVENTJAX_NUM_PROCESSES`` and
``EVENTJAX_PROCESS_ID``. ``--backend`` is applied with ``set_backend`` in
every process at set-up; processes started with different seeds, sizes or
backends stop at start-up with an error naming the difference.
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import PartitionSpec as P

import eventjax as ej
from eventjax import distributed as ejd

DT = 0.1  # ms
TAU_M, TAU_E, TAU_I, T_REF = 20.0, 5.0, 10.0, 5.0  # ms
V_T, V_R, E_L = -50.0, -60.0, -49.0  # mV
W_E, W_I = 60 * 0.27 / 10, -20 * 4.5 / 10  # mV
IN_DEGREE = 80  # inputs per neuron, as in the 4,000-neuron network at 2%
GEN_ROWS = 512  # targets per generator key: the unit of reproducible generation


def sizes(n):
    n_e = n * 4 // 5
    return n_e, n - n_e


def fcn_degree(n_tgt, n_src):
    return max(1, round(IN_DEGREE * n_src / n_tgt))


def csr_inputs(rng, rows, n_src, p):
    """Bernoulli(p) inputs of ``rows`` targets from ``n_src`` sources: sorted (target, source) pairs.

    Gaps between successive connections of the flattened block are geometric,
    so the work is proportional to the connections, not to rows x sources.
    """
    total, found, last = rows * n_src, [], -1
    while True:
        pos = last + np.cumsum(rng.geometric(p, max(1024, int((total - last) * p * 1.1) + 64)))
        found.append(pos[pos < total])
        if pos[-1] >= total:
            break
        last = pos[-1]
    pos = np.concatenate(found)
    return pos // n_src, pos % n_src


def fcn_inputs(rng, rows, n_src, k):
    """Exactly ``k`` distinct sources per target (Floyd's algorithm for all rows at once), sorted."""
    chosen = np.full((rows, k), -1, np.int64)
    for i in range(k):
        top = n_src - k + i
        t = rng.integers(0, top + 1, rows)
        chosen[:, i] = np.where((chosen[:, :i] == t[:, None]).any(axis=1), top, t)
    return np.sort(chosen, axis=1)


def block_inputs(seed, proj, targets, n_tgt, n_src, conn):
    """The inputs of the targets in ``range`` ``targets``, generated chunk by chunk from the seed."""
    parts = []
    for c in range(targets.start // GEN_ROWS, -(-targets.stop // GEN_ROWS)):
        lo, hi = c * GEN_ROWS, min((c + 1) * GEN_ROWS, n_tgt)
        rng = np.random.default_rng([seed, proj, c])
        if conn == 'csr':
            tgt, src = csr_inputs(rng, hi - lo, n_src, IN_DEGREE / n_tgt)
            keep = (tgt + lo >= targets.start) & (tgt + lo < targets.stop)
            parts.append((tgt[keep] + lo - targets.start, src[keep]))
        else:
            idx = fcn_inputs(rng, hi - lo, n_src, fcn_degree(n_tgt, n_src))
            parts.append(idx[max(0, targets.start - lo):targets.stop - lo])
    if conn == 'csr':
        return tuple(np.concatenate(x) for x in zip(*parts)) if parts else (np.zeros(0, int),) * 2
    return np.concatenate(parts) if parts else np.zeros((0, fcn_degree(n_tgt, n_src)), int)


def local_block(seed, n, conn, rows, b):
    """This process's synapses (onto the neurons in ``rows``, padded to ``b``), one tuple of arrays per projection.

    ``csr``: source-major ``(indices, indptr)`` of the ``(sources, b)`` block, for the
    event-driven ``transpose=True`` product; ``fcn``: the ``(b, k)`` source indices.
    """
    n_e, n_i = sizes(n)
    out = []
    for proj, n_src in enumerate((n_e, n_i)):
        inputs = block_inputs(seed, proj, rows, n, n_src, conn)
        if conn == 'csr':
            tgt, src = inputs
            indptr = np.zeros(n_src + 1, np.int32)
            np.cumsum(np.bincount(src, minlength=n_src), out=indptr[1:])
            out.append((tgt[np.argsort(src, kind='stable')].astype(np.int32), indptr))
        else:
            idx = np.zeros((b, inputs.shape[1]), np.int32)
            idx[:len(inputs)] = inputs
            out.append((idx,))
    return out


def initial_potentials(seed, n, rows, b):
    everyone = (V_R + np.random.default_rng([seed, 2]).random(n) * (V_T - V_R)).astype(np.float32)
    v0 = np.full(b, V_R, np.float32)  # padding neurons rest and never spike
    v0[:len(rows)] = everyone[rows.start:rows.stop]
    return v0


def arrivals(conn, arrays, spikes, n_src, b):
    """How many of this step's spikes arrive at each of the ``b`` neurons (exact small integers in float32)."""
    one = jnp.ones((1,), jnp.float32)
    if conn == 'csr':
        return ej.binary_csrmv(one, *arrays, spikes, shape=(n_src, b), transpose=True)
    return ej.binary_fcnmv(one, *arrays, spikes, shape=(b, n_src))


def network(n, conn, b, steps, gather, real):
    """The simulation of ``b`` neurons, seeing all ``n`` through ``gather``; returns the ``(steps, b)`` raster."""
    n_e, n_i = sizes(n)
    a_m, a_e, a_i = (float(np.exp(-DT / tau)) for tau in (TAU_M, TAU_E, TAU_I))

    def run(v0, exc, inh):
        mine = real()

        def step(state, t):
            v, ge, gi, last = state
            v_free = E_L + (v - E_L) * a_m + (ge + gi) * (1 - a_m)
            v = jnp.where(t - last < T_REF, v, v_free)
            spike = (v > V_T) & mine
            v = jnp.where(spike, V_R, v)
            last = jnp.where(spike, t, last)
            everyone = gather(spike)[:n]
            ge = ge * a_e + W_E * arrivals(conn, exc, everyone[:n_e], n_e, b)
            gi = gi * a_i + W_I * arrivals(conn, inh, everyone[n_e:], n_i, b)
            return (v, ge, gi, last), spike

        zeros = v0 * 0.0  # derived from v0, so inside shard_map the carry varies over the mesh like v0
        init = (v0, zeros, zeros, zeros - 1e9)
        return jax.lax.scan(step, init, jnp.arange(steps, dtype=jnp.float32) * DT)[1]

    return run


def one_process_raster(seed, n, conn, steps):
    """The reference: the whole network in this process, no mesh and no collective."""
    rows = range(n)
    exc, inh = local_block(seed, n, conn, rows, n)
    run = network(n, conn, n, steps, lambda s: s, lambda: jnp.ones(n, bool))
    return np.asarray(jax.jit(run)(initial_potentials(seed, n, rows, n), exc, inh))


def timed(compiled, *args, repeat=1):
    """The output and the shortest wall time of ``repeat`` calls (on a shared machine the others are noise)."""
    best = float('inf')
    for _ in range(repeat):
        start = time.perf_counter()
        out = jax.block_until_ready(compiled(*args))
        best = min(best, time.perf_counter() - start)
    return out, best


def shared_shape_blocks(job, seed, n, conn, rows, b):
    """This process's blocks, CSR indices padded to the widest block of any process; and the total synapses.

    A global array has one shape, so every process's shard must have it; entries past ``indptr[-1]`` are ignored.
    """
    exc, inh = local_block(seed, n, conn, rows, b)
    mine = sum(p[0].size if conn == 'csr' else len(rows) * p[0].shape[1] for p in (exc, inh))
    counts = job.allgather_host(np.array([exc[0].size, inh[0].size, mine])).reshape(-1, 3)
    if conn == 'csr':
        exc, inh = ((np.pad(p[0], (0, w - p[0].size)), p[1]) for p, w in zip((exc, inh), counts[:, :2].max(axis=0)))
    return exc, inh, int(counts[:, 2].sum())


def time_exchange(job, b, steps, repeat):
    """Seconds for ``steps`` spike exchanges alone, each needing the last (as in the simulation); best of ``repeat``."""
    exchange = jax.jit(job.program(
        lambda s: jax.lax.scan(lambda c, _: (c ^ ejd.all_gather_spikes(c, job)[:b], None), s, None, length=steps)[0],
        in_specs=P('p'), out_specs=P('p')))
    start = job.put(np.arange(b) % 7 == job.index)
    return timed(exchange, start, repeat=repeat + 1)[1]  # the first call compiles


def member(args, joined):
    """One process of the run: join, check, build its block, simulate, report (process 0 prints)."""
    rank, size = ejd.initialize(init_timeout=args.init_timeout, heartbeat_timeout=args.heartbeat_timeout,
                                shutdown_timeout=args.heartbeat_timeout * 3) if joined else (0, 1)
    # Chosen after initialize(): asking which backends can run already starts JAX's CPU client.
    if args.backend is None:
        args.backend = 'numba' if ej.backends_available()['numba']['cpu'].available else 'jax'
    ej.set_backend('cpu', args.backend)
    n, steps = args.neurons, int(round(args.duration / DT))
    ejd.check_job({'neurons': n, 'conn': args.conn, 'seed': args.seed, 'steps': steps,
                   'backend': ej.get_backend('cpu')}, 'cuba_distributed')
    job = ejd.current()
    say = print if rank == 0 else (lambda *a, **k: None)
    b, rows = ejd.block_size(n, size), ejd.own_rows(n, size, rank)
    start = time.perf_counter()
    exc, inh, total = shared_shape_blocks(job, args.seed, n, args.conn, rows, b)
    build = time.perf_counter() - start
    say(f'CUBA on {size} process(es) ({job.transport}), backend {args.backend!r}, {args.conn}: {n} neurons, '
        f'{total} synapses ({total / n:.0f} per neuron), {args.duration:g} ms at dt={DT} ms')
    say(f'  process 0 holds neurons [{rows.start}, {rows.stop}), generated its synapses in {build:.2f} s')

    exc_g, inh_g = (tuple(job.put(np.ascontiguousarray(x[None])) for x in proj) for proj in (exc, inh))
    v0 = job.put(initial_potentials(args.seed, n, rows, b))
    run = network(n, args.conn, b, steps, lambda s: ejd.all_gather_spikes(s, job),
                  lambda: job.axis_index() * b + jnp.arange(b) < n)
    local = lambda v, e, i: run(v, tuple(x[0] for x in e), tuple(x[0] for x in i))
    specs = (P('p'), (P('p'),) * len(exc_g), (P('p'),) * len(inh_g))
    simulate = jax.jit(job.program(local, in_specs=specs, out_specs=P(None, 'p')))
    with ejd.collective_errors():
        repeat = 3 if args.bench else 1
        # the first call compiles (mpi4jax's ordered effects rule out calling an ahead-of-time compiled program)
        raster, wall = timed(simulate, v0, exc_g, inh_g, repeat=repeat + 1)
        count = int(job.allgather_host(job.local(raster).sum()).sum())
        say(f'  rate {count / n / (args.duration * 1e-3):.2f} Hz; wall {wall:.2f} s, {steps / wall:.0f} steps/s '
            f'({wall / steps * 1e6:.0f} us/step)')
        if args.bench:
            comm = time_exchange(job, b, steps, repeat)
            say(f'  exchange alone (all_gather of {-(-size * b // 8)} bytes per step): {comm / steps * 1e6:.0f} '
                f'us/step; the step without it: {(wall - comm) / steps * 1e6:.0f} us (best of {repeat} runs each)')
        if not args.check:
            return 0
        full = np.concatenate(job.allgather_host(job.local(raster)), axis=1)[:, :n]
        same = bool(np.array_equal(full, one_process_raster(args.seed, n, args.conn, steps))) if rank == 0 else True
        # Every process waits in this collective (not at the shutdown barrier) while process 0 checks.
        same = bool(job.allgather_host(np.array([same])).all())
    say(f'  identical to the one-process run: {same}')
    return 0 if same else 1


def launch(argv, args):
    """Start ``--processes`` copies of this script on localhost as one JAX job; print process 0's report."""
    return ejd.launch([sys.executable, os.path.abspath(__file__), *argv], args.processes, timeout=args.timeout,
                      grace=args.heartbeat_timeout * 3 + 10)


def parse(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--processes', type=int, default=1, help='start this many processes on localhost')
    parser.add_argument('--cluster', action='store_true',
                        help='join a job started by a launcher (Slurm, Open MPI, or the environment variables)')
    parser.add_argument('--neurons', type=int, default=4000)
    parser.add_argument('--conn', choices=('csr', 'fcn'), default='csr')
    parser.add_argument('--duration', type=float, default=200.0, help='model time in ms (default 200)')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--backend', choices=('numba', 'jax'), help='default: numba where it is installed, else jax')
    parser.add_argument('--check', action='store_true', help='compare with the one-process run')
    parser.add_argument('--bench', action='store_true',
                        help='best of 3 runs, and time the spike exchange alone (best of 3 too)')
    parser.add_argument('--init-timeout', type=int, default=60, help='seconds to wait for all processes')
    parser.add_argument('--heartbeat-timeout', type=int, default=10, help='seconds before a silent process is dead')
    parser.add_argument('--timeout', type=float, default=900.0, help='with --processes: kill everything after this')
    args = parser.parse_args(argv)
    problem = bad_sizes(args)
    if problem:
        parser.error(problem)  # exit code 2, before any process starts or any JAX call
    return args


def bad_sizes(args):
    """What makes these arguments unusable, in words; None if nothing."""
    if args.processes < 1:
        return f'--processes must be at least 1, got {args.processes}.'
    if args.neurons < IN_DEGREE:
        return (f'--neurons must be at least {IN_DEGREE}, got {args.neurons}: each neuron draws {IN_DEGREE} '
                f'inputs ({"with probability 80 / neurons" if args.conn == "csr" else "exactly"}), so a smaller '
                f'network cannot hold them.')
    if not (np.isfinite(args.duration) and round(args.duration / DT) >= 1):
        return f'--duration must be at least one step ({DT} ms) of model time, got {args.duration} ms.'
    for name in ('init_timeout', 'heartbeat_timeout'):
        if getattr(args, name) < 1:
            return f'--{name.replace("_", "-")} must be at least 1 second, got {getattr(args, name)}.'
    if not (np.isfinite(args.timeout) and args.timeout > 0):
        return f'--timeout must be a positive number of seconds, got {args.timeout}.'
    return None


def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = parse(argv)
    joined = ejd.is_member(args.cluster)
    if args.processes > 1 and not joined:
        return launch(argv, args)
    return ejd.run_member(member, args, joined)


if __name__ == '__main__':
    raise SystemExit(main())
