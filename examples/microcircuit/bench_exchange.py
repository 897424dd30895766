"""The spike exchange alone, between 2 processes: PD14's packed words each step, by every transport at hand.

``python -m examples.microcircuit.bench_exchange [--words 1206] [--steps 5000] [--repeat 7]``

Each process holds ``--words`` uint32 words (PD14 at full scale on 2
processes: 1,206 words, 4,824 bytes, 9,648 bytes gathered a step) and
all-gathers them ``--steps`` times in a row, each step needing the last:

- ``mpi4py``: ``comm.Allgather`` on numpy buffers from Python, outside JAX
  (the MPI library's own cost);
- ``mpi4jax``: ``mpi4jax.allgather`` inside a jitted ``lax.scan`` (the step's path under ``mpirun``);
- ``mpi4jax+pack``: the same with the words packed from 32x as many bools by XLA each step
  (what the step did before the neuron kernel packed them);
- ``gloo`` and ``gloo+pack``: ``lax.all_gather`` in ``shard_map`` over JAX's gloo collectives.

The MPI runs start under ``mpirun`` (the ``mpi`` extra) and join through
``eventjax.distributed.initialize``, so each process is bound to its share of
the cores as in PD14's runs; ``EVENTJAX_BIND=none`` leaves them unbound. The
gloo runs start with ``eventjax.distributed.launch``. Prints the best and the
median of ``--repeat`` runs, in microseconds per step.
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

import numpy as np

from examples.microcircuit.bench_distributed import mpirun

MODULE = 'examples.microcircuit.bench_exchange'


def member(mode, words, steps, repeat):
    """One process: time ``mode``'s all-gather; process 0 prints one line."""
    from eventjax import distributed as ejd

    ejd.initialize(quiet=True, transport='gloo' if mode.startswith('gloo') else 'mpi')
    import jax

    import eventjax as ej

    job = ejd.current()
    barrier = (lambda: job.comm.Barrier()) if job.transport == 'mpi' else (lambda: job.allgather_host(0))
    own = np.arange(words, dtype=np.uint32) + job.index
    best = []
    if mode == 'mpi4py':
        out = np.empty(words * job.count, np.uint32)
        for _ in range(repeat):
            barrier()
            start = time.perf_counter()
            for _ in range(steps):
                job.comm.Allgather(own, out)
            best.append((time.perf_counter() - start) / steps)
    else:
        pack = mode.endswith('+pack')

        def body(c, _):
            gathered = job.all_gather(ej.bitpack(c) if pack else c)
            return c ^ ((gathered[-1] & 1) != 0 if pack else gathered[-1] & 1), None

        f = jax.jit(job.program(lambda s: jax.lax.scan(body, s, None, length=steps)[0],
                                in_specs=job.spec, out_specs=job.spec, check_vma=False))
        x = job.put(np.arange(words * 32) % 7 == 0 if pack else own)
        jax.block_until_ready(f(x))
        for _ in range(repeat):
            barrier()
            start = time.perf_counter()
            jax.block_until_ready(f(x))
            best.append((time.perf_counter() - start) / steps)
    if job.index == 0:
        print(f'{mode:13s} min {min(best) * 1e6:8.1f} us   median {np.median(best) * 1e6:8.1f} us   per step '
              f'({words * 4 * job.count} bytes gathered)', flush=True)
    return 0


def run(mode, args):
    """Start ``mode`` on 2 processes; its line, or why it did not run."""
    argv = ['-m', MODULE, '--member', mode, '--words', str(args.words), '--steps', str(args.steps),
            '--repeat', str(args.repeat)]
    env = dict(os.environ, JAX_PLATFORMS='cpu', NUMBA_NUM_THREADS='1')
    if mode.startswith('gloo'):
        command = [sys.executable, '-c', 'from eventjax import distributed as d; import sys; '
                   f'sys.exit(d.launch([sys.executable, *{argv!r}], 2, timeout={args.timeout}))']
    elif mpirun() is None:
        return f'{mode:13s} needs the mpi extra (make mpi)'
    else:
        command = [mpirun(), '-n', '2', sys.executable, *argv]
    try:
        proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=args.timeout,
                              start_new_session=True)
    except subprocess.TimeoutExpired:
        return f'{mode:13s} timed out after {args.timeout} s'
    lines = [line for line in proc.stdout.splitlines() if line.startswith(mode)]
    if proc.returncode or not lines:
        return f'{mode:13s} failed: {((proc.stderr or proc.stdout).strip().splitlines() or ["?"])[-1]}'
    return lines[0]


def jax_mpi_collectives():
    """Whether JAX's own CPU collectives can run over MPI here (they need MPItrampoline's wrapped MPI)."""
    return bool(os.environ.get('MPITRAMPOLINE_LIB'))


def main(argv=None):
    parser = argparse.ArgumentParser(prog=f'python -m {MODULE}', description=__doc__.splitlines()[0])
    parser.add_argument('--words', type=int, default=1206, help='uint32 words from each process (default: PD14)')
    parser.add_argument('--steps', type=int, default=5000, help='all-gathers in a row, timed together')
    parser.add_argument('--repeat', type=int, default=7, help='timed runs; the best and the median are printed')
    parser.add_argument('--modes', nargs='+', default=['mpi4py', 'mpi4jax', 'mpi4jax+pack', 'gloo', 'gloo+pack'])
    parser.add_argument('--timeout', type=int, default=600, help='seconds before a run is killed')
    parser.add_argument('--member', default='', help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    for name in ('words', 'steps', 'repeat'):
        if getattr(args, name) < 1:
            parser.error(f'--{name} must be at least 1, got {getattr(args, name)}.')
    if args.member:
        return member(args.member, args.words, args.steps, args.repeat)
    for mode in args.modes:
        print(run(mode, args), flush=True)
    if not jax_mpi_collectives():
        print("JAX's CPU collectives over MPI (jax_cpu_collectives_implementation='mpi') need MPItrampoline's "
              'MPIwrapper built against this MPI (MPITRAMPOLINE_LIB): not here, not timed')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
