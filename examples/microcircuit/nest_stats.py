"""NEST's reference statistics of PD14: run the reference once per seed and keep its per-population statistics.

``python -m examples.microcircuit.nest_stats --scale 1 --threads 4 --seed 1`` (needs the ``models`` extra) runs
``nest_reference`` (the ``microcircuit`` package on NEST, all spikes recorded), computes the statistics of
``stats.summarize`` over the ``--t-sim`` ms after the warm-up, and writes
``examples/microcircuit/data/nest_stats_{drive}_seed{S}.npz`` with the NEST version, scale, times and seed.
``--spikes PATH`` also keeps the raw spikes (too large for the repository); ``--from-spikes PATH`` redoes the
statistics from them, keeping the stored file's record of the run.
"""

from __future__ import annotations

import json
import os

import numpy as np

from examples.microcircuit import nest_reference, stats
from examples.microcircuit import params as P

DATA = os.path.join(os.path.dirname(__file__), 'data')


def main(argv=None):
    parser = nest_reference.parser()
    parser.set_defaults(t_sim=10000.0, scale=1.0, threads=4)
    parser.add_argument('--out', default='', help='the .npz to write (default: data/nest_stats_{drive}_seed{S}.npz)')
    parser.add_argument('--spikes', default='', help='also save the raw spikes (ids, times) to this .npz')
    parser.add_argument('--from-spikes', default='', help='redo the statistics from spikes saved by --spikes')
    args = parser.parse_args(argv)
    out = args.out or os.path.join(DATA, f'nest_stats_{args.drive}_seed{args.seed}.npz')
    if args.from_spikes:
        with np.load(args.from_spikes) as f, np.load(out) as old:
            record = {k: old[k] for k in old.files if k not in stats.summarize_keys(len(f['sizes']))}
            times = np.round(f['times'].astype(np.float64) / P.DT) * P.DT  # float32 on disk
            summary = stats.summarize(f['ids'], times, f['sizes'], float(record['t_presim']),
                                      float(record['t_sim']))
        np.savez_compressed(out, **summary, **record)
        print(f'statistics of {args.from_spikes} written to {out}')
        return 0
    figures, ids, times, sizes = nest_reference.run(args)
    # NEST stamps a spike of update n with (n + 1) dt; eventjax reports n, so both count update times
    times = times - P.DT
    if args.spikes:
        np.savez_compressed(args.spikes, ids=ids.astype(np.int32), times=times, sizes=sizes)
    summary = stats.summarize(ids, times, sizes, args.t_presim, args.t_sim)
    os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
    np.savez_compressed(out, **summary, simulator=figures['simulator'], scale=args.scale,
                        k_scale=args.scale if args.k_scale is None else args.k_scale, drive=args.drive,
                        t_presim=args.t_presim, t_sim=args.t_sim, seed=args.seed, sizes=sizes,
                        sim_s=figures['sim_s'], construction_s=figures['construction_s'])
    print(json.dumps(dict(figures, out=out, n_cv=summary['n_cv'].tolist())))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
