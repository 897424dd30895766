"""``python -m examples.microcircuit --scale 0.1 --t-sim 1000 --drive dc --backend numba``: build PD14, warm up
500 ms, simulate, and print construction time, real-time factor, peak RSS and per-population rates."""

from __future__ import annotations

import argparse
import json
import sys
import time

import numpy as np

from examples.microcircuit import check_run, peak_rss_gb

BACKENDS = ('jax', 'numba', 'pallas', 'warp')


def save_raster(path, model, steps, ids, t0_ms, ms):
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    from examples.microcircuit import params as P

    fig, ax = plt.subplots(figsize=(8, 6))
    # at most 100 ms and a fixed share of each population, as the reference's raster shows
    window = steps * P.DT - t0_ms < min(ms, 100.0)
    colors = ['#595289', '#af143c'] * 4
    offsets = np.concatenate([[0], np.cumsum(model.derived.num_neurons)])
    for p in range(8):
        sel = window & (model.pop_of[ids] == p)
        keep = sel & ((ids - offsets[p]) % max(1, model.derived.num_neurons[p] // 200) == 0)
        ax.plot(steps[keep] * P.DT, -ids[keep], '.', ms=1, color=colors[p])
    ax.set_yticks([-(offsets[p] + offsets[p + 1]) / 2 for p in range(8)], P.POPULATIONS)
    ax.set_xlabel('time (ms)')
    ax.set_title(f'PD14, {model.n} neurons')
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def parse(argv=None) -> argparse.Namespace:
    """The command's arguments, checked before anything is built (a bad one is a usage error, exit 2)."""
    from examples.microcircuit import params as P

    parser = argparse.ArgumentParser(prog='python -m examples.microcircuit', description=__doc__.splitlines()[0])
    parser.add_argument('--scale', type=float, default=0.1, help='N_scaling (and K_scaling unless --k-scale)')
    parser.add_argument('--k-scale', type=float, default=None, help='K_scaling (default: --scale)')
    parser.add_argument('--t-sim', type=float, default=1000.0,
                        help=f'model time after the warm-up (ms, at least one step of {P.DT} ms)')
    parser.add_argument('--t-presim', type=float, default=500.0, help='warm-up (ms, default 500; 0 for none)')
    parser.add_argument('--drive', choices=('dc', 'poisson'), default='dc')
    parser.add_argument('--backend', choices=BACKENDS, default='numba')
    parser.add_argument('--delivery', choices=('pull', 'push'), default=None,
                        help="numba and pallas: sum each step's synapses at read time ('pull') or deliver into a ring "
                             "('push'); default: pull on numba, push elsewhere")
    parser.add_argument('--dtype', choices=('float32', 'float64'), default='float32')
    parser.add_argument('--seed', type=int, default=55)
    parser.add_argument('--raster', default='', help='save a raster plot of the simulated time to this PNG')
    parser.add_argument('--spikes', default='', help='save the simulated spikes (steps and neuron ids) to this .npz')
    parser.add_argument('--quiet', action='store_true', help='no progress bars')
    parser.add_argument('--json', action='store_true', help='end with the figures as one JSON line')
    args = parser.parse_args(argv)
    check_run(parser, args)
    if args.backend == 'pallas':
        check_pallas(parser)
    return args


def check_pallas(parser):
    """``--backend pallas`` needs a TPU or GPU, or the CPU's interpret mode asked for (a usage error otherwise)."""
    import jax

    from eventjax.backends.pallas import get_cpu_interpret

    platform = jax.default_backend()
    if platform not in ('tpu', 'gpu') and not get_cpu_interpret():
        parser.error(f'--backend pallas runs its kernels on a TPU or GPU, and JAX sees only {platform}; use '
                     '--backend jax or numba here, or set EVENTJAX_PALLAS_INTERPRET=1 to interpret the pallas '
                     'kernels on the CPU (slow).')


def main(argv=None):
    args = parse(argv)
    if args.dtype == 'float64':
        import jax

        jax.config.update('jax_enable_x64', True)
    from examples.microcircuit import simulation

    progress = None if args.quiet else sys.stderr
    start = time.perf_counter()
    model = simulation.build_for(args.backend, args.scale, args.k_scale, args.drive, args.seed, np.dtype(args.dtype),
                                 args.delivery)
    runner = simulation.Runner(model, args.backend, args.seed, args.delivery)
    construction = time.perf_counter() - start
    compile_s = runner.compile()
    print(f'PD14: {model.n} neurons, {model.nnz} synapses, scale {args.scale:g} (K {args.k_scale or args.scale:g}), '
          f'{args.drive} drive, {args.backend}, {args.dtype}')
    print(f'  construction     {construction:8.2f} s   (+ compile {compile_s:.2f} s)')
    _, _, presim = runner.run(args.t_presim, 'warm-up', progress, record=False)
    print(f'  warm-up {args.t_presim:5.0f} ms {presim:8.2f} s')
    steps, ids, wall = runner.run(args.t_sim, 'simulate', progress)
    print(f'  simulate {args.t_sim:4.0f} ms {wall:8.2f} s   RTF {wall / (args.t_sim * 1e-3):.2f}')
    print(f'  peak RSS         {peak_rss_gb():8.2f} GB')
    rates = simulation.population_rates(model, ids, args.t_sim)
    from examples.microcircuit import params as P

    print('  rates (Hz)       ' + '  '.join(f'{p} {r:.2f}' for p, r in zip(P.POPULATIONS, rates)))
    if args.raster:
        save_raster(args.raster, model, steps, ids, args.t_presim, args.t_sim)
        print(f'  raster saved to {args.raster}')
    if args.spikes:
        np.savez_compressed(args.spikes, steps=steps, ids=ids, t_presim=args.t_presim, t_sim=args.t_sim,
                            scale=args.scale)
        print(f'  spikes saved to {args.spikes}')
    if args.json:
        print(json.dumps({'simulator': f'eventjax {args.backend}', 'neurons': model.n, 'synapses': model.nnz,
                          'construction_s': construction, 'compile_s': compile_s, 'presim_s': presim,
                          'sim_s': wall, 'rtf': wall / (args.t_sim * 1e-3), 'peak_rss_gb': peak_rss_gb(),
                          'rates': [float(r) for r in rates], 'delivery': runner.delivery},
                         allow_nan=False))  # strict JSON: no NaN
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
