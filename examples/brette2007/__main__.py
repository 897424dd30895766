"""``python -m examples.brette2007 --model cuba --t-sim 1000 --backend numba``: build, run, print the figures."""

from __future__ import annotations

import argparse
import json
import time

import jax
import numpy as np

BACKENDS = ('jax', 'numba', 'warp', 'cpp')  # "all": the CPU backends
OTHERS = ('pallas',)  # on a TPU (or a GPU): by name only


def main(argv=None):
    parser = argparse.ArgumentParser(prog='python -m examples.brette2007',
                                     description='Brette et al. (2007) CUBA / COBA on eventjax, as NEST defines them.')
    parser.add_argument('--model', choices=('cuba', 'coba'), default='cuba')
    parser.add_argument('--t-sim', type=float, default=1000.0, help='model time in ms (default 1000)')
    parser.add_argument('--backend', default='numba', help=f'one of {", ".join(BACKENDS + OTHERS)}, or "all" '
                                                          f'({", ".join(BACKENDS)})')
    parser.add_argument('--dtype', choices=('float32', 'float64'), default='float64',
                        help='float64 (default) reproduces NEST spike for spike; float32 is faster')
    parser.add_argument('--seed', type=int, default=0)
    parser.add_argument('--json', action='store_true', help='end with one JSON line per backend')
    args = parser.parse_args(argv)
    backends = BACKENDS if args.backend == 'all' else (args.backend,)
    for backend in backends:
        if backend not in BACKENDS + OTHERS:
            parser.error(f'--backend must be one of {", ".join(BACKENDS + OTHERS)} or "all", got {backend!r}')
    if args.dtype == 'float64':
        jax.config.update('jax_enable_x64', True)
    from examples.brette2007 import model  # after x64 is set: the model's constants follow it

    dtype = np.dtype(args.dtype)
    start = time.perf_counter()
    net = model.build(args.model, seed=args.seed, dtype=dtype)
    build_s = time.perf_counter() - start
    print(f'Brette 2007 {args.model.upper()}: {model.N} neurons, {len(net.proj[0]) - net.n_virtual} synapses, '
          f'{args.t_sim:g} ms at dt={model.DT} ms, {args.dtype}; build {build_s:.2f} s')
    for backend in backends:
        spikes, _, compile_s, wall = model.simulate(args.model, net, args.t_sim, backend, dtype)
        rate_e, rate_i = model.rates(spikes, args.t_sim)
        print(f'  {backend:<6} compile {compile_s:6.2f} s  wall {wall:7.3f} s  '
              f'{wall / (args.t_sim * 1e-3):7.3f} s per model second  rates E {rate_e:5.2f} Hz, I {rate_i:5.2f} Hz')
        if args.json:
            print(json.dumps({'simulator': f'eventjax {backend}', 'model': args.model, 'dtype': args.dtype,
                              'build_s': build_s, 'compile_s': compile_s, 'wall_s': wall,
                              's_per_model_s': wall / (args.t_sim * 1e-3), 'rate_e': rate_e, 'rate_i': rate_i}))
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
