"""The ``eventjax`` command line: ``eventjax info``, ``eventjax bench``, ``eventjax cache`` and ``eventjax warm``.

Examples:
    eventjax --version
    eventjax info                      # versions, devices, backends, configuration
    eventjax bench --family csr --plot csr.png
    python -m eventjax bench --quick --backends jax numba
    eventjax cache --clear             # forget the compiled kernels (numba, C++, CUDA)
    eventjax warm --families csr,fcn   # compile the standard kernels into the disk caches ahead of time
"""

from __future__ import annotations

import argparse
import difflib
import importlib.metadata
import importlib.util
import platform as _platform
import sys

from eventjax._version import __version__

__all__ = ['info_lines', 'main']

_DESCRIPTION = 'eventjax: custom JAX primitives with per-platform backends, and event-driven kernels.'
_EPILOG = """examples:
  eventjax info                              versions, devices, backends, configuration
  eventjax bench --quick                     time the standard kernels (small sizes)
  eventjax bench --family csr --plot csr.png one family, with a plot (needs eventjax[plot])
  eventjax bench --family plasticity         in-place weight updates at 4,000, 10,000 and 100,000 neurons
  eventjax bench --family dt2t               per-synapse products at 4,000 and 100,000 neurons, with brainevent
  eventjax cache --clear                     delete the compiled kernels (numba, C++, CUDA)
  eventjax warm --backend numba --families csr,fcn   compile the standard kernels into the disk caches
"""

_PACKAGES = (('eventjax', 'eventjax'), ('jax', 'jax'), ('jaxlib', 'jaxlib'), ('numba', 'numba'),
             ('warp', 'warp-lang'), ('numpy', 'numpy'))


def _version(dist: str) -> str:
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        if dist == 'eventjax':  # running from a source tree without an install
            import eventjax
            return f'{eventjax.__version__} (source tree)'
        return 'not installed'


def _devices() -> list[str]:
    import jax

    lines = [f'default platform: {jax.default_backend()}']
    for name in ('cpu', 'gpu', 'tpu'):
        try:
            devs = jax.devices(name)
        except RuntimeError:
            continue
        lines.append(f'{name}: {len(devs)} device(s): ' + ', '.join(str(d) for d in devs[:8])
                     + (' ...' if len(devs) > 8 else ''))
    return lines


def _numba_threads() -> str:
    try:
        import numba
    except ImportError:
        return 'numba is not installed'
    try:
        from eventjax.backends import numba_bridge

        layer = numba_bridge.threading_layer()
        return f'layer {layer!r}, {numba_bridge.get_num_threads()} of {numba.config.NUMBA_NUM_THREADS} threads'
    except Exception as exc:  # a broken threading layer must not stop the report
        return f'unavailable ({type(exc).__name__}: {exc})'


def info_lines() -> list[str]:
    """The lines ``eventjax info`` prints.

    Example:
        >>> any(line.startswith('versions') for line in info_lines())
        True
    """
    import eventjax as ej

    out = ['versions']
    out += [f'  {label:<9} {_version(dist)}' for label, dist in _PACKAGES]
    out.append(f'  {"python":<9} {sys.version.split()[0]} ({_platform.platform()})')
    out.append('devices')
    out += [f'  {line}' for line in _devices()]
    out.append('backends (backend / platform: available, or why not and the fix)')
    for backend, per_platform in ej.backends_available().items():
        for plat, status in per_platform.items():
            text = 'yes' if status.available else f'no: {status.reason}' + (f' Fix: {status.fix}' if status.fix else '')
            out.append(f'  {backend:<11}{plat:<4} {text}')
    out.append(f'numba threads\n  {_numba_threads()}')
    snap = ej.config.snapshot()
    out.append('configuration')
    out.append(f'  version            {snap.version} (the key of this configuration in JAX\'s caches)')
    stats = ej.config.configuration_stats()
    out.append(f'  configurations     {stats.cached} cached (limit {stats.limit}, '
               f'set_max_configurations); {stats.keys_made} keys made over {stats.changes} changes')
    out.append('  global backends    ' + ', '.join(f'{p}={b}' for p, b in snap.backends.items()))
    active = ej.config.current_override()
    out.append(f'  override (thread)  {", ".join(f"{p}={b}" for p, b in active) if active else "none"}')
    out.append(f'  primitives         {len(snap.primitives)} registered')
    out.append(f'  numba threads      {ej.config.get_numba_num_threads() or "numba default"}')
    out.append(f'  pallas on cpu      {"interpret mode" if snap.pallas_cpu_interpret else "off"}')
    return out


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
    from eventjax.benchmarks import FAMILIES, outputs

    if args.json:
        problem = outputs.writable_file_problem('--json', args.json)
        if problem:
            return problem
    if args.plot:
        from matplotlib.backend_bases import FigureCanvasBase

        return outputs.plot_template_problem(args.plot, args.family or FAMILIES,
                                             FigureCanvasBase.get_supported_filetypes())
    return None


def _bench(args) -> int:
    from eventjax import benchmarks

    problem = _bench_problem(args)
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


def _size(n: int) -> str:
    for unit in ('B', 'KiB', 'MiB'):
        if n < 1024:
            return f'{n:.0f} {unit}' if unit == 'B' else f'{n:.1f} {unit}'
        n /= 1024
    return f'{n:.1f} GiB'


def _cache(args) -> int:
    import numba

    from eventjax.config import cache

    base = numba.config.CACHE_DIR or ''
    folders = cache.clear_cache(base) if args.clear else cache.cache_folders(base)
    verb = 'deleted' if args.clear else 'holds'
    for folder in folders:
        print(f'{folder.role}\n  {folder.path}\n  {verb} {folder.files} file(s), {_size(folder.size_bytes)}')
    if not args.clear:
        print('(numba handlers follow NUMBA_CACHE_DIR, C++/CUDA libraries EVENTJAX_CACHE_DIR, else both '
              'XDG_CACHE_HOME; eventjax cache --clear deletes them)')
    return 0


def _warm(args) -> int:
    from eventjax.serving.disk_cache import FAMILIES, warm

    backends = [b for item in args.backend or ['numba'] for b in item.split(',') if b]
    families = [f for f in (args.families or ','.join(FAMILIES)).split(',') if f]
    unknown = sorted(set(families) - set(FAMILIES))
    if unknown:
        print(f'eventjax warm: unknown families {unknown}; choose from {",".join(FAMILIES)} '
              '(for example --families csr,fcn)', file=sys.stderr)
        return 2
    failed = []

    def show(r) -> None:
        print(f'{r.family:<6}{r.operator:<16}{r.backend:<7}{r.seconds:7.1f} s' + (f'  {r.error}' if r.error else ''),
              flush=True)
        if r.error:
            failed.append(r)

    results = warm(backends, families, progress=show)
    missing = sorted(set(backends) - {r.backend for r in results})
    if missing:
        print(f'eventjax warm: no standard operator of {",".join(families)} has the cpu backend(s) {missing}; '
              'eventjax info lists the backends', file=sys.stderr)
        return 2
    return 1 if failed else 0


def _events_summary(args, results, sizes, notes) -> list[str]:
    """Each event form against the bool form, and numba against brainevent (this one and, if given, another).

    Returns the lines of the family's targets, printed at the end of the run.
    """
    from eventjax import benchmarks
    from eventjax.benchmarks.anchors import import_optional
    from eventjax.benchmarks.cases import EVENTS_RATES, EVENTS_SIZES

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
    from eventjax import benchmarks

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


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='eventjax', description=_DESCRIPTION, epilog=_EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--version', action='version', version=f'eventjax {__version__}')
    sub = parser.add_subparsers(dest='command', required=True)
    sub.add_parser('info', help='versions, devices, available backends and the configuration')
    cache = sub.add_parser('cache', help='where the compiled kernels (numba, C++, CUDA) are kept, their size; --clear')
    cache.add_argument('--clear', action='store_true', help='delete them (the next run compiles again)')
    warm = sub.add_parser('warm', help='compile the standard kernels into the disk caches ahead of time '
                                       '(container images, CI)')
    warm.add_argument('--backend', action='append', metavar='NAME',
                      help='a CPU backend to compile for (repeatable, or comma-separated; default: numba)')
    warm.add_argument('--families', metavar='LIST', default=None,
                      help='comma-separated families (default: dense,csr,fcn,jitc)')
    bench = sub.add_parser('bench', help='time the standard kernels against dense, the memory floor, brainevent '
                                         'and scipy')
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
    return parser


def main(argv=None) -> int:
    """Entry point of the ``eventjax`` script and of ``python -m eventjax``."""
    args = _parser().parse_args(argv)
    if args.command == 'info':
        print('\n'.join(info_lines()))
        return 0
    if args.command == 'cache':
        return _cache(args)
    if args.command == 'warm':
        return _warm(args)
    return _bench(args)
