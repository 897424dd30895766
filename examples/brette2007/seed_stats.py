"""Brette et al. 2007 CUBA and COBA over several seeds: mean rates and ISI-CV distributions on NEST and eventjax.

``python -m examples.brette2007.seed_stats --simulator nest --seeds 1-8`` (NEST needs the ``models`` extra) and
``--simulator eventjax`` run both models for ``--t-sim`` ms per seed and write
``examples/brette2007/data/seed_stats_{simulator}.npz``; without ``--simulator`` it reads both files and prints,
per model and population (E, I), the mean rates and the KS distances of the ISI-CV distributions,
eventjax-vs-NEST over all seed pairs against NEST-vs-NEST.

The window is ``[WINDOW_START, t_sim)``, after the stimulus (1-51 ms) and its transient. A run *died out* when its
E population is silent in the last 100 ms; COBA sometimes does, in both simulators, and only the sustained runs
are compared. CVs: as in ``examples.microcircuit.stats`` (neurons with at least two ISIs), at most ``CV_SAMPLE``
per run and population (a fixed-seed random subset). With several seeds on each side there are more
eventjax-vs-NEST pairs than NEST-vs-NEST ones, so the largest distance is no fair test; eventjax is *within* the
spread when the median of its distances to NEST is at most the largest NEST-vs-NEST distance, and its median
mean rate lies within NEST's min-max.
"""

from __future__ import annotations

import argparse
import itertools
import os

import numpy as np

from examples.microcircuit import stats

DATA = os.path.join(os.path.dirname(__file__), 'data')
MODELS = ('cuba', 'coba')
POPS = ('E', 'I')
WINDOW_START = 200.0  # ms
TAIL = 100.0  # ms: a run with no E spike in its last TAIL ms died out
CV_SAMPLE = 1000
N_E, N = 3200, 4000  # examples.brette2007.model's sizes (imported lazily there, after the dtype is chosen)


def summarize(ids, times, t_sim, seed=stats.SUBSET_SEED):
    """``(mean rates E and I in the window, sustained, [CV sample E, CV sample I])`` of one run's spikes."""
    ids, times = np.asarray(ids, np.int64), np.asarray(times, np.float64)
    inside = (times >= WINDOW_START) & (times < t_sim)
    ids, times = ids[inside], times[inside]
    seconds = (t_sim - WINDOW_START) * 1e-3
    is_e = ids < N_E
    rates = np.array([is_e.sum() / N_E / seconds, (~is_e).sum() / (N - N_E) / seconds])
    sustained = bool(np.any(is_e & (times >= t_sim - TAIL)))
    rng = np.random.default_rng(seed)
    cvs = [stats.cap(stats.isi_cvs(ids[sel], times[sel])[1], rng, CV_SAMPLE).astype(np.float32)
           for sel in (is_e, ~is_e)]
    return rates, sustained, cvs


def run_seeds(simulator, seeds, t_sim):
    """Both models over ``seeds``: a dict ready for ``np.savez_compressed``."""
    if simulator == 'eventjax':
        import jax

        jax.config.update('jax_enable_x64', True)
        from examples.brette2007 import model
    else:
        from examples.brette2007 import nest_run
    out = {'seeds': np.asarray(seeds), 't_sim': t_sim, 'window_start': WINDOW_START}
    for name in MODELS:
        rates, sustained = [], []
        for k, seed in enumerate(seeds):
            if simulator == 'eventjax':
                net = model.build(name, seed=seed, dtype=np.float64)
                spikes = model.simulate(name, net, t_sim, 'numba', np.float64)[0]
                steps, ids = np.nonzero(spikes)
                times = (steps + 1) * model.DT  # NEST's stamp of a spike of update n
                out['simulator'] = 'eventjax numba, float64'
            else:
                figures, ids, times = nest_run.run(name, t_sim, 1, seed)
                out['simulator'] = figures['simulator']
            r, s, cvs = summarize(ids, times, t_sim)
            rates.append(r)
            sustained.append(s)
            for pop, cv in zip(POPS, cvs):
                out[f'{name}_cv_{pop}_{k}'] = cv
            print(f'{simulator} {name} seed {seed}: E {r[0]:.2f} Hz, I {r[1]:.2f} Hz'
                  + ('' if s else ' (died out)'), flush=True)
        out[f'{name}_rates'] = np.asarray(rates)
        out[f'{name}_sustained'] = np.asarray(sustained)
    return out


def compare(ours, nest):
    """Rows ``(model, pop, died ej, died NEST, ej rates, NEST rates, ej-vs-NEST KS, NEST-vs-NEST KS, within)``."""
    rows = []
    for name in MODELS:
        alive = [np.nonzero(f[f'{name}_sustained'])[0] for f in (ours, nest)]
        if alive[1].size < 2 or alive[0].size < 1:
            raise ValueError(f'{name}: {alive[0].size} sustained eventjax runs and {alive[1].size} NEST ones; '
                             'the comparison needs at least 1 and 2')
        died = [int(f[f'{name}_sustained'].size - a.size) for f, a in zip((ours, nest), alive)]
        for p, pop in enumerate(POPS):
            r_ej, r_nest = (f[f'{name}_rates'][a, p] for f, a in zip((ours, nest), alive))
            cv_ej = [ours[f'{name}_cv_{pop}_{k}'] for k in alive[0]]
            cv_nest = [nest[f'{name}_cv_{pop}_{k}'] for k in alive[1]]
            ej = [stats.ks_distance(a, b) for a in cv_ej for b in cv_nest]
            nn = [stats.ks_distance(a, b) for a, b in itertools.combinations(cv_nest, 2)]
            within = bool(np.median(ej) <= max(nn) and r_nest.min() <= np.median(r_ej) <= r_nest.max())
            rows.append((name, pop, died[0], died[1], r_ej, r_nest, ej, nn, within))
    return rows


def format_rows(rows, ours, nest):
    lines = [f'{"model":5s} {"pop":3s} {"died ej/NEST":>12s} {"eventjax rate (Hz)":>19s} {"NEST rate (Hz)":>15s} '
             f'{"ej-NEST CV KS (median, max)":>28s} {"NEST-NEST CV KS max":>20s} within']
    n_ej, n_nest = len(ours['seeds']), len(nest['seeds'])
    for name, pop, died_ej, died_nest, r_ej, r_nest, ej, nn, within in rows:
        died = f'{died_ej}/{n_ej}, {died_nest}/{n_nest}'
        lines.append(f'{name:5s} {pop:3s} {died:>12s} '
                     f'{r_ej.min():8.2f} - {r_ej.max():6.2f} {r_nest.min():6.2f} - {r_nest.max():6.2f} '
                     f'{np.median(ej):19.3f}, {max(ej):.3f} {max(nn):20.3f} {"yes" if within else "NO"}')
    return '\n'.join(lines)


def seed_list(text):
    """``'1-5'`` or ``'1,3,7'`` as a list of ints."""
    if '-' in text:
        lo, hi = (int(x) for x in text.split('-'))
        return list(range(lo, hi + 1))
    return [int(x) for x in text.split(',')]


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m examples.brette2007.seed_stats',
                                     description=__doc__.splitlines()[0])
    parser.add_argument('--simulator', choices=('nest', 'eventjax'), default=None, help='run this simulator')
    parser.add_argument('--seeds', type=seed_list, default=seed_list('1-8'), help="e.g. '1-8' or '1,2,5'")
    parser.add_argument('--t-sim', type=float, default=1000.0)
    parser.add_argument('--data', default=DATA, help='the folder of the stored statistics')
    args = parser.parse_args(argv)
    if args.t_sim <= WINDOW_START + TAIL:
        parser.error(f'--t-sim must exceed {WINDOW_START + TAIL:g} ms')
    if args.simulator:
        out = run_seeds(args.simulator, args.seeds, args.t_sim)
        os.makedirs(args.data, exist_ok=True)
        np.savez_compressed(os.path.join(args.data, f'seed_stats_{args.simulator}.npz'), **out)
    files = [os.path.join(args.data, f'seed_stats_{s}.npz') for s in ('eventjax', 'nest')]
    if not all(os.path.exists(f) for f in files):
        print('the comparison needs both ' + ' and '.join(files))
        return 0 if args.simulator else 1
    ours, nest = (dict(np.load(f)) for f in files)
    print(f'{ours["simulator"]} seeds {ours["seeds"].tolist()} against {nest["simulator"]} seeds '
          f'{nest["seeds"].tolist()}, {float(ours["t_sim"]) - WINDOW_START:g} ms from {WINDOW_START:g} ms')
    try:
        rows = compare(ours, nest)
    except ValueError as e:
        print(e)
        return 1
    print(format_rows(rows, ours, nest))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
