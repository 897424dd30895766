"""The ``eventjax`` command line: ``eventjax info`` and ``eventjax bench``.

Examples:
    eventjax info                      # versions, devices, backends, configuration
    eventjax bench --family csr --plot csr.png
    python -m eventjax bench --quick --backends jax numba
"""

from __future__ import annotations

import argparse
import importlib.metadata
import platform as _platform
import sys

__all__ = ['info_lines', 'main']

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
    except ImportError:
        # Before the numba bridge is installed, report numba's own settings.
        return (f'layer {numba.config.THREADING_LAYER!r} (not launched), '
                f'{numba.config.NUMBA_NUM_THREADS} threads max (the numba bridge is not installed)')
    try:
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
            out.append(f'  {backend:<7}{plat:<4} {text}')
    out.append(f'numba threads\n  {_numba_threads()}')
    snap = ej.config.snapshot()
    out.append('configuration')
    out.append(f'  version            {snap.version}')
    out.append('  global backends    ' + ', '.join(f'{p}={b}' for p, b in snap.backends.items()))
    active = ej.config.current_override()
    out.append(f'  override (thread)  {", ".join(f"{p}={b}" for p, b in active) if active else "none"}')
    out.append(f'  primitives         {len(snap.primitives)} registered')
    out.append(f'  numba threads      {snap.numba_num_threads or "numba default"}')
    out.append(f'  pallas on cpu      {"interpret mode" if snap.pallas_cpu_interpret else "off"}')
    return out


def _bench(args) -> int:
    from eventjax import benchmarks

    sizes = args.sizes or (benchmarks.QUICK_SIZES if args.quick else benchmarks.SIZES)
    notes = []
    results = benchmarks.run(args.family or benchmarks.FAMILIES, args.backends, sizes, quick=args.quick,
                             seed=args.seed, notes=notes, progress=None if args.no_progress else sys.stderr)
    for note in notes:
        print(f'note: {note}')
    if not results:
        print('nothing to measure: no case matched the families and backends asked for.')
        return 1
    print(benchmarks.format_table(results))
    if args.plot and '{family}' in args.plot:
        for family in dict.fromkeys(r.family for r in results):
            path = args.plot.format(family=family)
            benchmarks.plot([r for r in results if r.family == family], path, title=f'eventjax bench: {family}')
            print(f'plot saved to {path}')
    elif args.plot:
        benchmarks.plot(results, args.plot, title=f'eventjax bench: {", ".join(args.family or ["all"])}')
        print(f'plot saved to {args.plot}')
    return 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='eventjax', description=__doc__.splitlines()[0])
    sub = parser.add_subparsers(dest='command', required=True)
    sub.add_parser('info', help='versions, devices, available backends and the configuration')
    bench = sub.add_parser('bench', help='time the standard kernels against a dense product')
    bench.add_argument('--family', action='append', choices=('dense', 'csr', 'fcn', 'jitc'),
                       help='kernel family; repeat for several (default: all)')
    bench.add_argument('--backends', nargs='+', metavar='NAME', help='backends to time (default: all that run here)')
    bench.add_argument('--sizes', nargs='+', type=int, metavar='N', help='neuron counts of the square networks')
    bench.add_argument('--plot', metavar='FILE.png',
                       help='save a plot (needs matplotlib); "{family}" in the name: one plot per family')
    bench.add_argument('--quick', action='store_true', help='small sizes, fewer timed calls')
    bench.add_argument('--seed', type=int, default=0)
    bench.add_argument('--no-progress', action='store_true', help='no progress bar on stderr')
    return parser


def main(argv=None) -> int:
    """Entry point of the ``eventjax`` script and of ``python -m eventjax``."""
    args = _parser().parse_args(argv)
    if args.command == 'info':
        print('\n'.join(info_lines()))
        return 0
    return _bench(args)
