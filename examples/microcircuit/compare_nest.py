"""PD14's statistics on eventjax against NEST's seed spread: KS distances per population and statistic.

``python -m examples.microcircuit.compare_nest --run --scale 1 --t-sim 10000 --plot docs/_static/pd14_statistics.png``
runs eventjax (numba, DC drive, the reference's 500 ms warm-up, then ``--t-sim`` ms) for ``--seed``, computes the
statistics of ``stats.summarize`` (written to ``data/eventjax_stats_{drive}_seed{S}.npz``), loads NEST's per-seed
statistics (``data/nest_stats_{drive}_seed*.npz``, made by ``nest_stats``) and every stored eventjax seed of the same
scale and model time, and prints, per population and statistic, the KS distances of every eventjax seed to every
NEST seed and NEST-vs-NEST over all seed pairs; eventjax lies *within* the spread when the median of its distances
is at most the largest NEST-vs-NEST one (the rule of ``examples.brette2007.seed_stats``). Mean rates: within when
the median over eventjax's seeds lies in NEST's min-max. Without ``--run`` it compares the stored files.
"""

from __future__ import annotations

import argparse
import glob
import itertools
import os
import sys

import numpy as np

from examples.microcircuit import params as P
from examples.microcircuit import stats

DATA = os.path.join(os.path.dirname(__file__), 'data')
LABELS = {'rate': 'rate (Hz)', 'cv': 'ISI CV', 'corr': 'correlation'}


def run_eventjax(scale, k_scale, drive, seed, t_presim, t_sim, backend='numba', progress=sys.stderr, delay_min=1):
    """eventjax's statistics of ``t_sim`` ms after a ``t_presim`` ms warm-up, as ``stats.summarize`` gives them
    (``delay_min``: delays clipped to at least that many steps, as the distributed runs' ``--delay-min``)."""
    from examples.microcircuit import simulation

    model = simulation.build(scale, k_scale, drive, seed, np.dtype('float32'), delay_min=delay_min)
    runner = simulation.Runner(model, backend, seed)
    runner.compile()
    runner.run(t_presim, 'warm-up', progress, record=False)
    steps, ids, wall = runner.run(t_sim, 'simulate', progress)
    summary = stats.summarize(ids, steps * P.DT, model.derived.num_neurons, t_presim, t_sim)
    return summary, wall


def load(pattern):
    """The stored summaries matching a glob pattern, in name order, as dicts."""
    out = []
    for path in sorted(glob.glob(pattern)):
        with np.load(path) as f:
            out.append({k: f[k] for k in f.files})
    return out


def _seeds(ours):
    """One eventjax summary or several, as a list."""
    return [ours] if isinstance(ours, dict) else list(ours)


def compare(ours, nests):
    """Per statistic and population: ``(eventjax-vs-NEST KS list, NEST-vs-NEST KS list, KS 5 % critical value,
    within)``, and per population the mean-rate check ``(eventjax median, NEST min, NEST max, within)``.

    ``ours`` is one eventjax summary or a list of them (one per seed). As for Brette's networks
    (``examples.brette2007.seed_stats``), eventjax lies within NEST's spread where the median of its distances to
    NEST's seeds is at most the largest NEST-vs-NEST distance, and the median of its mean rates lies in NEST's
    range. With one NEST seed there is no spread: ``within`` is None."""
    if not nests:
        raise ValueError('no NEST statistics to compare with')
    ours = _seeds(ours)
    table = {}
    for name in stats.STATS:
        for p in range(len(P.POPULATIONS)):
            key = f'{name}_{p}'
            ej = [stats.ks_distance(o[key], n[key]) for o in ours for n in nests]
            nn = [stats.ks_distance(a[key], b[key]) for a, b in itertools.combinations(nests, 2)]
            crit = stats.ks_critical(min(o[key].size for o in ours), min(n[key].size for n in nests))
            table[name, p] = ej, nn, crit, (bool(np.nanmedian(ej) <= np.nanmax(nn)) if nn else None)
    rates = []
    for p in range(len(P.POPULATIONS)):
        theirs = [float(n['mean_rate'][p]) for n in nests]
        mine = float(np.median([float(o['mean_rate'][p]) for o in ours]))
        rates.append((mine, min(theirs), max(theirs),
                      min(theirs) <= mine <= max(theirs) if len(nests) > 1 else None))
    return table, rates


def yardstick(ours, nests):
    """How often the rule says *within* for one seed against two reference seeds: each NEST seed against the
    other NEST seeds taken two at a time, and each eventjax seed against every pair of NEST seeds.

    Returns two lists of ``(distributions within, mean rates within)``, NEST's then eventjax's: a seed of
    either simulator judged by the same rule from the same amount of data (needs 3 or more NEST seeds)."""
    ours = _seeds(ours)

    def score(candidate, refs):
        table, rates = compare(candidate, list(refs))
        return sum(ok for *_, ok in table.values()), sum(ok for *_, ok in rates)

    theirs = [score(n, refs) for k, n in enumerate(nests)
              for refs in itertools.combinations(nests[:k] + nests[k + 1:], 2)]
    mine = [score(o, refs) for o in ours for refs in itertools.combinations(nests, 2)]
    return theirs, mine


def _verdict(ok):
    return {True: 'yes', False: 'NO', None: '-'}[ok]


def format_table(table, rates):
    lines = [f'{"statistic":10s} {"pop":5s} {"ej-vs-NEST KS (median, max)":>28s} {"NEST-vs-NEST KS":>15s} '
             f'{"5% crit.":>9s}  within']
    for (name, p), (ej, nn, crit, ok) in table.items():
        spread = f'{min(nn):.3f} - {max(nn):.3f}' if nn else '-'
        lines.append(f'{name:10s} {P.POPULATIONS[p]:5s} {np.median(ej):21.3f}, {max(ej):.3f} {spread:>15s} '
                     f'{crit:9.3f}  {_verdict(ok)}')
    counted = [ok for *_, ok in table.values() if ok is not None]
    if counted:
        lines.insert(0, f'distributions within NEST\'s spread: {sum(counted)} of {len(counted)}')
    lines.append(f'{"mean rate":10s} {"pop":5s} {"eventjax (median)":>28s} {"NEST min - max":>15s}')
    for p, (mine, lo, hi, ok) in enumerate(rates):
        lines.append(f'{"":10s} {P.POPULATIONS[p]:5s} {mine:28.3f} {f"{lo:.3f} - {hi:.3f}":>15s} {"":9s}  '
                     f'{_verdict(ok)}')
    return '\n'.join(lines)


def plot(ours, nests, path):
    """Empirical CDFs of the three statistics per population, each eventjax seed over each NEST seed."""
    ours = _seeds(ours)
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(len(stats.STATS), len(P.POPULATIONS), figsize=(16, 6.5), sharey=True)
    for i, name in enumerate(stats.STATS):
        for p, pop in enumerate(P.POPULATIONS):
            ax = axes[i, p]
            key = f'{name}_{p}'
            for k, n in enumerate(nests):
                x = np.sort(n[key])
                ax.step(x, np.arange(1, x.size + 1) / max(x.size, 1), color='0.55', lw=2.5, where='post',
                        label='NEST seeds' if k == 0 else None)
            for k, o in enumerate(ours):
                x = np.sort(o[key])
                ax.step(x, np.arange(1, x.size + 1) / max(x.size, 1), color='#af143c', lw=1, where='post',
                        label='eventjax seeds' if k == 0 else None)
            if name == 'rate':
                ax.set_xscale('symlog', linthresh=1.0)
            if i == 0:
                ax.set_title(pop)
            if p == 0:
                ax.set_ylabel(f'CDF of\n{LABELS[name]}')
            ax.tick_params(labelsize=7)
    axes[0, 0].legend(fontsize=7, loc='lower right')
    fig.tight_layout()
    fig.savefig(path, dpi=80)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m examples.microcircuit.compare_nest',
                                     description=__doc__.splitlines()[0])
    parser.add_argument('--run', action='store_true', help='run eventjax (else load its stored statistics)')
    parser.add_argument('--scale', type=float, default=1.0)
    parser.add_argument('--k-scale', type=float, default=None)
    parser.add_argument('--t-sim', type=float, default=10000.0)
    parser.add_argument('--t-presim', type=float, default=P.T_PRESIM)
    parser.add_argument('--drive', choices=('dc', 'poisson'), default='dc')
    parser.add_argument('--seed', type=int, default=1)
    parser.add_argument('--backend', default='numba')
    parser.add_argument('--data', default=DATA, help='the folder of the stored statistics')
    parser.add_argument('--plot', default='', help='save the CDF plot to this PNG')
    parser.add_argument('--quiet', action='store_true', help='no progress bars')
    parser.add_argument('--delay-min', type=int, default=1,
                        help='delays clipped to at least this many steps (2: the distributed runs that exchange '
                             'every second step); its statistics are stored apart from the reference runs')
    args = parser.parse_args(argv)
    if args.delay_min < 1:
        parser.error(f'--delay-min must be at least 1 step, got {args.delay_min}.')
    # the clipped runs get files of their own, so the reference comparison never mixes them in
    kind = args.drive if args.delay_min == 1 else f'{args.drive}_dmin{args.delay_min}'
    path = os.path.join(args.data, f'eventjax_stats_{kind}_seed{args.seed}.npz')
    if args.run:
        summary, wall = run_eventjax(args.scale, args.k_scale, args.drive, args.seed, args.t_presim, args.t_sim,
                                     args.backend, None if args.quiet else sys.stderr, args.delay_min)
        os.makedirs(args.data, exist_ok=True)
        np.savez_compressed(path, **summary, simulator=f'eventjax {args.backend}', scale=args.scale,
                            k_scale=args.scale if args.k_scale is None else args.k_scale, drive=args.drive,
                            t_presim=args.t_presim, t_sim=args.t_sim, seed=args.seed, sim_s=wall,
                            delay_min=args.delay_min)
        print(f'eventjax: {args.t_sim:g} ms in {wall:.1f} s; statistics written to {path}')
    if not os.path.exists(path):
        parser.error(f'{path} does not exist; make it with --run')
    this = load(path)[0]
    ours = [o for o in load(os.path.join(args.data, f'eventjax_stats_{kind}_seed*.npz'))
            if float(o['scale']) == float(this['scale']) and float(o['t_sim']) == float(this['t_sim'])]
    nests = load(os.path.join(args.data, f'nest_stats_{args.drive}_seed*.npz'))
    if not nests:
        parser.error(f'no NEST statistics in {args.data}; make them with nest_stats')
    if len(nests) < 2:
        print('one NEST seed: its distances to eventjax, no spread (that needs 2 or more)')
    first = ours[0]
    for n in nests:
        if float(n['scale']) != float(first['scale']) or float(n['t_sim']) != float(first['t_sim']):
            parser.error(f'NEST seed {int(n["seed"])} ran scale {float(n["scale"]):g} for {float(n["t_sim"]):g} ms; '
                         f'eventjax scale {float(first["scale"]):g} for {float(first["t_sim"]):g} ms')
    print(f'eventjax seeds {", ".join(str(int(o["seed"])) for o in ours)} against {nests[0]["simulator"]} seeds '
          + ', '.join(str(int(n['seed'])) for n in nests)
          + f'; scale {float(first["scale"]):g}, {float(first["t_sim"]):g} ms after {float(first["t_presim"]):g} ms')
    print(format_table(*compare(ours, nests)))
    if len(nests) >= 3:
        theirs, mine = yardstick(ours, nests)
        n_stats = len(stats.STATS) * len(P.POPULATIONS)
        for who, scores in (('a NEST seed against two other NEST seeds', theirs),
                            ('an eventjax seed against two NEST seeds', mine)):
            print(f'yardstick, {who}: within on {np.mean([a for a, _ in scores]):.1f} of {n_stats} distributions '
                  f'(range {min(a for a, _ in scores)}-{max(a for a, _ in scores)}) and '
                  f'{np.mean([b for _, b in scores]):.1f} of {len(P.POPULATIONS)} mean rates '
                  f'(range {min(b for _, b in scores)}-{max(b for _, b in scores)})')
    if args.plot:
        plot(ours, nests, args.plot)
        print(f'plot saved to {args.plot}')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
