"""Run the reference PD14 (the ``microcircuit`` package on NEST) and print its figures as one JSON line.

``python -m examples.microcircuit.nest_reference --scale 0.1 --t-sim 1000 --drive dc --threads 2``
(needs the ``models`` extra). Construction is the reference's ``create()`` and
``connect()`` (which ends with ``nest.Prepare()``); the warm-up and the
simulation are its ``simulate()`` calls; rates count the recorded spikes after
the warm-up. NEST refuses full scale below 4 threads (at most 134,217,726
connections per virtual process and synapse model).
"""

from __future__ import annotations

import argparse
import glob
import json
import os
import tempfile
import time

import numpy as np

from examples.microcircuit import peak_rss_gb


def parser():
    """The command line shared with ``nest_stats``."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--scale', type=float, default=0.1)
    parser.add_argument('--k-scale', type=float, default=None)
    parser.add_argument('--t-sim', type=float, default=1000.0)
    parser.add_argument('--t-presim', type=float, default=500.0)
    parser.add_argument('--drive', choices=('dc', 'poisson'), default='dc')
    parser.add_argument('--threads', type=int, default=2)
    parser.add_argument('--seed', type=int, default=55)
    return parser


def run(args):
    """Build, warm up and simulate the reference; ``(figures, ids, times ms, sizes)`` of the spikes after the
    warm-up, ``ids`` counting from 0 over the populations in order."""
    import nest
    from microcircuit.network_params import default_net_dict
    from microcircuit.sim_params import default_sim_dict
    from microcircuit.stimulus_params import default_stim_dict

    from microcircuit.network import Network

    nest.set_verbosity('M_ERROR')
    data = tempfile.mkdtemp(prefix='pd14_nest_') + '/'
    net_dict = dict(default_net_dict, N_scaling=args.scale,
                    K_scaling=args.scale if args.k_scale is None else args.k_scale, bg_input_type=args.drive)
    sim_dict = dict(default_sim_dict, data_path=data, local_num_threads=args.threads, rng_seed=args.seed,
                    t_presim=args.t_presim, t_sim=args.t_sim, print_time=False, store_metadata=False)
    start = time.perf_counter()
    net = Network(sim_dict, net_dict, dict(default_stim_dict))
    net.create()
    net.connect()
    construction = time.perf_counter() - start
    start = time.perf_counter()
    net.simulate(args.t_presim)
    presim = time.perf_counter() - start
    start = time.perf_counter()
    net.simulate(args.t_sim)
    wall = time.perf_counter() - start
    rss = peak_rss_gb()
    bounds = np.loadtxt(os.path.join(data, 'population_nodeids.dat'), dtype=np.int64, ndmin=2)
    senders, times = [], []
    for path in glob.glob(os.path.join(data, 'spike_recorder-*.dat')):
        rows = np.loadtxt(path, comments='#', skiprows=3, ndmin=2)
        if rows.size:
            late = rows[:, 1] > args.t_presim
            senders.append(rows[late, 0].astype(np.int64))
            times.append(rows[late, 1])
    senders = np.concatenate(senders) if senders else np.zeros(0, np.int64)
    times = np.concatenate(times) if times else np.zeros(0)
    sizes = bounds[:, 1] - bounds[:, 0] + 1
    counts = [int(np.sum((senders >= lo) & (senders <= hi))) for lo, hi in bounds]
    rates = [c / s / (args.t_sim * 1e-3) for c, s in zip(counts, sizes)]
    figures = {'simulator': f'NEST {nest.__version__}', 'threads': args.threads,
               'neurons': int(sizes.sum()), 'synapses': int(nest.num_connections),
               'construction_s': construction, 'presim_s': presim, 'sim_s': wall,
               'rtf': wall / (args.t_sim * 1e-3), 'peak_rss_gb': rss, 'rates': rates}
    # the populations' node ids are contiguous and in order
    return figures, senders - bounds[0, 0], times, sizes


def main(argv=None):
    print(json.dumps(run(parser().parse_args(argv))[0]))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
