"""The Potjans & Diesmann (2014) cortical microcircuit (PD14) on eventjax, as the INM-6 reference defines it."""

import math
import resource


def peak_rss_gb():
    """The process' peak resident memory so far (GB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 / 1e9


def check_run(parser, args):
    """Refuse, as usage errors (exit 2), the scales, times and seed of a run that cannot be simulated.

    A scale outside (0, 1], a simulated time under one step, a negative or
    undefined warm-up, a negative seed, and a scale that leaves a population
    without neurons (rates would divide by zero).
    """
    from examples.microcircuit import params as P

    if not 0 < args.scale <= 1 or (args.k_scale is not None and not 0 < args.k_scale <= 1):
        parser.error('--scale and --k-scale must lie in (0, 1].')
    if not (math.isfinite(args.t_sim) and args.t_sim >= P.DT):
        parser.error(f'--t-sim must be a time of at least one step ({P.DT} ms), got {args.t_sim:g}.')
    if not (math.isfinite(args.t_presim) and args.t_presim >= 0):
        parser.error(f'--t-presim must be a time of 0 ms or more, got {args.t_presim:g}.')
    if args.seed < 0:
        parser.error(f'--seed must be 0 or more, got {args.seed}.')
    sizes = P.derive(args.scale, args.k_scale or args.scale, args.drive).num_neurons
    if sizes.min() < 1:
        smallest = math.ceil(0.5 / P.FULL_NUM_NEURONS.min() * 1e5) / 1e5  # rounds the smallest to 1 neuron
        empty = ', '.join(p for p, n in zip(P.POPULATIONS, sizes) if n < 1)
        parser.error(f'--scale {args.scale:g} leaves {empty} with no neuron; use a scale of at least '
                     f'{smallest:g} (every population needs a neuron).')
