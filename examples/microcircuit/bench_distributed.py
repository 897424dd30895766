"""``make bench-distributed``: PD14 on 1, 2 and 4 processes of one numba thread each, the exchange timed apart,
and a projection of the time per step to 2-64 cluster nodes.

``python -m examples.microcircuit.bench_distributed [--scale 1] [--t-sim 1000] [--processes 1 2 4] [--out FILE]``

Each run is ``examples.microcircuit.distributed`` under ``mpirun`` (the
``mpi`` extra; without it, on JAX's gloo collectives), one numba thread a
process, PD14 with DC drive. Its table gives, per model step (0.1 ms), the
wall time, the spike exchange alone and the step without it. The
projection takes the one-process step (compute ``C``, the measured step
less its exchange) and an MPI all-gather of ``P`` nodes modelled as
``log2(P) * alpha + (P - 1) / P * bytes / bandwidth`` (recursive doubling,
Hockney's model) with the interconnect's latency ``--alpha-us`` and
bandwidth ``--bandwidth-gbs`` (defaults: 2 us and 12.5 GB/s, an InfiniBand
HDR link's published order), exchanged every ``--delay-min`` steps::

    time per step(P) = C / P + allgather(P, interval * n / 8 bytes) / interval

It assumes that the work divides evenly over the processes (each holds
``1 / P`` of the neurons and of the synapses onto them) and that a node runs
one process of the measured speed; NEST's published real-time factors of
the full-scale model on 1 and 2 nodes (0.67 and 0.53) stand beside it.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile

NEST_RTF = {1: 0.67, 2: 0.53}  # NEST's PD14 at full scale on 1 and 2 compute nodes (published)
DT_MS = 0.1


def mpirun():
    """The ``mpirun`` of the mpi extra (beside this Python), else None (the runs then take gloo)."""
    if any(importlib.util.find_spec(m) is None for m in ('mpi4py', 'mpi4jax')):
        return None
    return shutil.which('mpirun', path=os.pathsep.join([os.path.dirname(sys.executable), os.environ.get('PATH', '')]))


def run(processes, args, timeout):
    """One run of ``processes`` processes; its figures (``distributed.py --json``) or ``{'error': ...}``."""
    with tempfile.TemporaryDirectory(prefix='pd14-bench-') as tmp:
        out = os.path.join(tmp, 'run.json')
        argv = ['-m', 'examples.microcircuit.distributed', '--scale', str(args.scale), '--t-sim', str(args.t_sim),
                '--t-presim', str(args.t_presim), '--delay-min', str(args.delay_min), '--json', out]
        launcher = mpirun()
        env = dict(os.environ, NUMBA_NUM_THREADS='1', JAX_PLATFORMS='cpu')
        if launcher:
            command = [launcher, '-n', str(processes), sys.executable, *argv]
        else:
            command = [sys.executable, *argv, '--processes', str(processes), '--timeout', str(timeout)]
        try:
            proc = subprocess.run(command, env=env, capture_output=True, text=True, timeout=timeout,
                                  start_new_session=True)
        except subprocess.TimeoutExpired:
            return {'processes': processes, 'error': f'timed out after {timeout} s'}
        if proc.returncode or not os.path.exists(out):
            tail = (proc.stderr or proc.stdout).strip().splitlines()[-1:] or ['failed']
            return {'processes': processes, 'error': tail[0]}
        with open(out) as f:
            return json.load(f)


def allgather_us(nodes, nbytes, alpha_us, bandwidth_gbs):
    """The modelled all-gather of ``nbytes`` in all over ``nodes`` nodes (recursive doubling), in microseconds."""
    if nodes == 1:
        return 0.0
    return math.ceil(math.log2(nodes)) * alpha_us + (nodes - 1) / nodes * nbytes / (bandwidth_gbs * 1e3)


def tables(results, args):
    """The measured table and the projection, as Markdown lines."""
    lines = ['| processes | transport | step (us) | exchange (us) | step without it (us) | RTF |',
             '|---|---|---|---|---|---|']
    for r in results:
        if 'error' in r:
            lines.append(f"| {r['processes']} | error: {r['error']} | | | | |")
            continue
        lines.append(f"| {r['processes']} | {r['transport']} | {r['step_us']:.0f} | {r['exchange_us']:.1f} | "
                     f"{r['step_us'] - r['exchange_us']:.0f} | {r['rtf']:.2f} |")
    one = next((r for r in results if r.get('processes') == 1 and 'error' not in r), None)
    if one is None:
        return lines
    compute = one['step_us'] - one['exchange_us']
    nbytes = args.delay_min * -(-one['neurons'] // 32) * 4
    lines += ['', f"Projection (compute {compute:.0f} us a step on one process at scale {one['scale']:g}, "
              f"{nbytes} bytes every {args.delay_min} step(s), alpha {args.alpha_us:g} us, "
              f'{args.bandwidth_gbs:g} GB/s):', '',
              '| nodes | compute / P (us) | exchange a step (us) | step (us) | RTF | NEST RTF |',
              '|---|---|---|---|---|---|']
    for nodes in (1, 2, 4, 8, 16, 32, 64):
        exchange = allgather_us(nodes, nbytes, args.alpha_us, args.bandwidth_gbs) / args.delay_min
        step = compute / nodes + exchange
        nest = f'{NEST_RTF[nodes]:.2f}' if nodes in NEST_RTF else ''
        lines.append(f'| {nodes} | {compute / nodes:.1f} | {exchange:.1f} | {step:.1f} | '
                     f'{step / (DT_MS * 1e3):.3f} | {nest} |')
    return lines


def parse(argv):
    parser = argparse.ArgumentParser(prog='python -m examples.microcircuit.bench_distributed',
                                     description=__doc__.splitlines()[0])
    parser.add_argument('--scale', type=float, default=1.0, help='N and K scaling (default 1: full scale)')
    parser.add_argument('--t-sim', type=float, default=1000.0, help='model time timed (ms)')
    parser.add_argument('--t-presim', type=float, default=100.0, help='warm-up (ms)')
    parser.add_argument('--delay-min', type=int, default=1, help='shortest delay in steps; the exchange interval')
    parser.add_argument('--processes', type=int, nargs='+', default=[1, 2, 4])
    parser.add_argument('--alpha-us', type=float, default=2.0, help="the interconnect's MPI latency (us)")
    parser.add_argument('--bandwidth-gbs', type=float, default=12.5, help="the interconnect's bandwidth (GB/s)")
    parser.add_argument('--timeout', type=float, default=3600.0, help='seconds for each run')
    parser.add_argument('--out', default='', help='also write the tables here (Markdown)')
    args = parser.parse_args(argv)
    if not 0 < args.scale <= 1:
        parser.error(f'--scale must lie in (0, 1], got {args.scale}.')
    if args.delay_min < 1 or any(p < 1 for p in args.processes):
        parser.error('--delay-min and --processes must be at least 1.')
    if args.alpha_us < 0 or args.bandwidth_gbs <= 0:
        parser.error('--alpha-us must be >= 0 and --bandwidth-gbs > 0.')
    return args


def main(argv=None):
    args = parse(sys.argv[1:] if argv is None else argv)
    results = []
    for processes in args.processes:
        results.append(run(processes, args, args.timeout))
        print(json.dumps(results[-1]), flush=True)
    lines = tables(results, args)
    print('\n'.join(lines))
    if args.out:
        with open(args.out, 'w') as f:
            f.write('\n'.join(lines) + '\n')
    return 0 if all('error' not in r for r in results) else 1


if __name__ == '__main__':
    raise SystemExit(main())
