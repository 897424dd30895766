"""``eventjax bench``: the standard kernels timed against dense, the memory floor, brainevent and scipy.

Run from a checkout of eventjax (``make bench``, or ``eventjax bench`` where eventjax is installed
with ``pip install -e .``); the wheel leaves this folder out.

Examples:
    python -m benchmarks --family csr --plot csr.png
    python -m benchmarks --quick --backends jax numba
"""

from __future__ import annotations

import argparse
import difflib
import importlib.util
import os
import sys

import benchmarks
from benchmarks import tpu_bench
from benchmarks.tpu_report import SECTIONS

__all__ = ['main', 'parser']


def parser(prog: str = 'eventjax bench') -> argparse.ArgumentParser:
    """The options of ``eventjax bench``."""
    bench = argparse.ArgumentParser(prog=prog, description='time the standard kernels against dense, the memory '
                                                           'floor, brainevent and scipy')
    bench.add_argument('--family', action='append',
                       choices=('dense', 'csr', 'fcn', 'jitc', 'delay', 'events', 'dt2t', 'plasticity'),
                       help='kernel family; repeat for several (default: all products; dt2t (per-synapse '
                            'products) and plasticity only when named)')
    bench.add_argument('--backends', nargs='+', metavar='NAME', help='backends to time (default: all that run here)')
    bench.add_argument('--sizes', nargs='+', type=int, metavar='N',
                       help='neuron counts of the square networks (default 1000 4000 10000; the dense family '
                            'stops at 20000; --family delay alone: 4000 100000)')
    bench.add_argument('--rate', type=float, metavar='FRACTION',
                       help='fraction of neurons with an event (default 0.02; 0.05 for jitc)')
    bench.add_argument('--plot', metavar='FILE.png',
                       help='save a plot (needs matplotlib); "{family}" in the name: one plot per family')
    bench.add_argument('--json', metavar='FILE.json', help='also write every result, the machine and the notes')
    bench.add_argument('--quick', action='store_true', help='small sizes, fewer timed calls')
    bench.add_argument('--no-compare', action='store_true', help='leave out brainevent and scipy (faster)')
    bench.add_argument('--brainevent-python', metavar='PYTHON',
                       help='events and delay families: also time brainevent installed for this interpreter '
                            '(e.g. brainevent 0.3.0 on Python 3.12) on the same arrays, in the same run')
    bench.add_argument('--seed', type=int, default=0)
    bench.add_argument('--no-progress', action='store_true', help='no progress bar on stderr')
    tpu = bench.add_argument_group('the TPU table', 'run when JAX\'s default device is a TPU, or with --tpu')
    tpu.add_argument('--tpu', action='store_true',
                     help='the TPU table: every operator with a pallas TPU kernel per backend (default pallas jax), '
                          'timed in a jitted loop and per call, beside the dense jnp product and brainevent; '
                          'delivery and plasticity; CUBA and PD14 per step (default sizes 4000 16000)')
    tpu.add_argument('--tpu-doc', metavar='FILE', help='write the tables as an include for the docs (.rst or .md); '
                                                        '"{section}" in the name: one file per section')
    tpu.add_argument('--tpu-sections', nargs='+', choices=SECTIONS, default=list(SECTIONS), metavar='SECTION',
                     help=f'parts of the TPU table to run (default: all of {" ".join(SECTIONS)})')
    tpu.add_argument('--tpu-ops', nargs='+', metavar='NAME',
                     help='only these products and updates (e.g. binary_csrmv fcn_on_pre; default: all), to split '
                          'a table too long for one run')
    tpu.add_argument('--row-timeout', type=float, default=120.0, metavar='S',
                     help='seconds a row may take before it reads "timed out" (default 120; PD14 at least 300)')
    tpu.add_argument('--cuba-ms', type=float, default=1000.0, metavar='MS', help='CUBA\'s model time (default 1000)')
    tpu.add_argument('--pd14-scale', type=float, default=0.1, metavar='SCALE',
                     help='PD14\'s N and K scaling (default 0.1; 1 for full scale)')
    tpu.add_argument('--pd14-ms', type=float, default=100.0, metavar='MS', help='PD14\'s timed model time '
                                                                                '(default 100)')
    tpu.add_argument('--pd14-warmup', type=float, default=100.0, metavar='MS',
                     help='PD14\'s model time before the timed part (default 100)')
    tpu.add_argument('--tpu-from', nargs='+', metavar='FILE.json',
                     help='measure nothing: make the tables (and --tpu-doc) of earlier runs\' --json files, '
                          'e.g. one run per size or section')
    # The TPU table's code on another platform (the tests run it on the CPU): a check, not a measurement.
    tpu.add_argument('--platform', help=argparse.SUPPRESS)
    return bench


def _bench_problem(args) -> str | None:
    """What makes these bench arguments unusable, found before any case runs; None if nothing."""
    from eventjax.config.snapshot import normalize_backend

    if args.plot and importlib.util.find_spec('matplotlib') is None:
        return ('--plot needs matplotlib, which is not installed. Install it with '
                "pip install 'eventjax[plot]' (or pip install matplotlib), or leave out --plot.")
    problem = _output_problem(args)
    if problem:
        return problem
    if args.rate is not None and not 0 < args.rate <= 1:
        return (f'--rate: the fraction of neurons with an event must lie in (0, 1], got {args.rate}; '
                'for example --rate 0.005 for 0.5%.')
    if args.sizes and min(args.sizes) < 1:
        return (f'--sizes: every size must be a positive neuron count, got {min(args.sizes)}; '
                'for example --sizes 1000 4000.')
    if not args.row_timeout > 0 or not args.cuba_ms >= 0.1 or not args.pd14_ms >= 0.1 or not args.pd14_warmup >= 0:
        return ('--row-timeout, --cuba-ms and --pd14-ms must be positive (the model times at least one step of '
                f'0.1 ms) and --pd14-warmup 0 or more, got {args.row_timeout:g}, {args.cuba_ms:g}, {args.pd14_ms:g} '
                f'and {args.pd14_warmup:g}.')
    if not 0 < args.pd14_scale <= 1:
        return f'--pd14-scale must lie in (0, 1] (1 is full scale), got {args.pd14_scale:g}.'
    if args.backends:
        import eventjax as ej

        known = sorted(ej.backends_available())
        unknown = [b for b in args.backends if normalize_backend(b) not in known]
        if unknown:
            hints = [m for b in unknown for m in difflib.get_close_matches(b, known, n=1)]
            return (f'--backends: unknown backend {", ".join(map(repr, unknown))}; known backends are '
                    f'{", ".join(known)}' + (f' (did you mean {", ".join(map(repr, hints))}?)' if hints else '.'))
    return None


def _output_problem(args) -> str | None:
    """What keeps --json or --plot from being written, found before the run; None if nothing."""
    from benchmarks import outputs

    if args.json:
        problem = outputs.writable_file_problem('--json', args.json)
        if problem:
            return problem
    if args.plot:
        from matplotlib.backend_bases import FigureCanvasBase

        return outputs.plot_template_problem(args.plot, args.family or benchmarks.FAMILIES,
                                             FigureCanvasBase.get_supported_filetypes())
    return None


def run(args) -> int:
    """Run the bench for parsed ``args``; returns the exit code."""
    problem = _bench_problem(args)
    if args.tpu or args.tpu_from or args.platform or (problem is None and tpu_bench.default_is_tpu()):
        return tpu_bench.run(args, problem)
    if problem:
        print(f'eventjax bench: error: {problem}', file=sys.stderr)
        return 2
    sizes = args.sizes or (benchmarks.QUICK_SIZES if args.quick else None)
    notes = []
    machine = benchmarks.measure_machine(args.quick)
    print(f'machine: {machine.describe()}')
    if args.family and 'plasticity' in args.family:
        # Updates in place, timed as a loop feeding the weights back: their own table.
        rows = benchmarks.run_plasticity(args.sizes, [args.rate] if args.rate else None, args.backends,
                                         compare=not args.no_compare, budget_s=0.1 if args.quick else 0.5,
                                         seed=args.seed, progress=None if args.no_progress else sys.stderr)
        print('\nplasticity: µs per update (W[i, :] += trace on the stored entries of the rows with an event)')
        print(benchmarks.format_plasticity(rows))
        args.family = [f for f in args.family if f != 'plasticity']
        if not args.family:
            return 0
    results = benchmarks.run(args.family or benchmarks.FAMILIES, args.backends, sizes, quick=args.quick,
                             seed=args.seed, notes=notes, progress=None if args.no_progress else sys.stderr,
                             machine=machine, compare=not args.no_compare, rate=args.rate)
    if not results:
        for note in notes:
            print(f'note: {note}')
        print('nothing to measure: no case matched the families and backends asked for.')
        return 1
    for family in dict.fromkeys(r.family for r in results):
        print(f'\n{family}')
        print(benchmarks.format_table([r for r in results if r.family == family]))
    targets = _events_summary(args, results, sizes, notes) if any(r.family == 'events' for r in results) else []
    print(f'\n{benchmarks.LEGEND}')
    for note in notes:
        print(f'note: {note}')
    if targets:  # last, with the delay family's: the goals met and missed
        print('\nevents targets')
        for line in targets:
            print(f'  {line}')
    if any(r.family == 'delay' for r in results):
        _delay_summary(args, results)  # last: it ends with the targets met and missed
    try:
        if args.json:
            benchmarks.write_json(args.json, results, machine, notes)
            print(f'results written to {args.json}')
        if args.plot and '{family}' in args.plot:
            for family in dict.fromkeys(r.family for r in results):
                path = args.plot.format(family=family)
                benchmarks.plot([r for r in results if r.family == family], path, title=f'eventjax bench: {family}')
                print(f'plot saved to {path}')
        elif args.plot:
            benchmarks.plot(results, args.plot, title=f'eventjax bench: {", ".join(args.family or ["all"])}')
            print(f'plot saved to {args.plot}')
    except OSError as err:  # checked at the start, but the disk may fill or a folder go meanwhile
        print(f'eventjax bench: error: could not write the results ({err}); the tables above are all there is.',
              file=sys.stderr)
        return 1
    return 0


def _events_summary(args, results, sizes, notes) -> list[str]:
    """Each event form against the bool form, and numba against brainevent (this one and, if given, another).

    Returns the lines of the family's targets, printed at the end of the run.
    """
    from benchmarks.anchors import import_optional
    from benchmarks.cases import EVENTS_RATES, EVENTS_SIZES

    elsewhere = []
    if args.brainevent_python and not args.no_compare:
        elsewhere, why = benchmarks.brainevent_elsewhere(args.brainevent_python, sizes or EVENTS_SIZES, EVENTS_RATES,
                                                         seed=args.seed)
        if why:
            notes.append(why)
    else:
        notes.append('events: no --brainevent-python: brainevent is compared only as installed here.')
    be = import_optional('brainevent')
    installed = getattr(be, '__version__', 'installed')
    print('\nevents: each form / the bool form on the same backend (below 1: faster); numba / brainevent\'s '
          'fastest cpu backend')
    for line in benchmarks.events_findings(results, elsewhere, installed=installed):
        print(line)
    return benchmarks.events_targets(results, elsewhere, installed=installed)


def _delay_summary(args, results) -> None:
    """Delivery against the undelayed product, numba against brainevent (if given), and the targets."""
    elsewhere = []
    if args.brainevent_python and not args.no_compare:
        sizes = sorted({r.n for r in results if r.family == 'delay'})
        elsewhere, why = benchmarks.brainevent_delay_elsewhere(args.brainevent_python, sizes, seed=args.seed)
        if why:
            print(f'note: {why}')
    else:
        print('note: delay: no --brainevent-python, so no comparison with brainevent (it installs on Python 3.12).')
    print('\ndelay: µs per step / the undelayed event product in the same scan on the same backend; numba / '
          "brainevent's fastest cpu backend (timed right after, in its own interpreter)")
    for line in benchmarks.delay_findings(results, elsewhere):
        print(line)


def main(argv=None, prog: str = 'eventjax bench') -> int:
    """Entry point of ``eventjax bench`` and ``python -m benchmarks``; returns the exit code."""
    code = run(parser(prog).parse_args(argv))
    from benchmarks.tpu_table import abandoned

    if abandoned():  # a timed-out row is stuck in a call that cannot be interrupted: do not wait for it
        print('note: a timed-out row still runs; leaving without waiting for it.', file=sys.stderr, flush=True)
        sys.stdout.flush()
        os._exit(code)
    return code
