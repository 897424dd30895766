"""The ``eventjax`` command line: ``eventjax info``, ``eventjax bench``, ``eventjax cache`` and ``eventjax warm``.

Examples:
    eventjax --version
    eventjax info                      # versions, devices, backends, configuration
    eventjax info --kernel csrmv       # the kernel each platform runs for csrmv, and each wrap around it
    eventjax bench --family csr --plot csr.png
    python -m eventjax bench --quick --backends jax numba
    eventjax cache --clear             # forget the compiled kernels (numba, C++, CUDA)
    eventjax warm --families csr,fcn   # compile the standard kernels into the disk caches ahead of time
"""

from __future__ import annotations

import argparse
import importlib.metadata
import pathlib
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
  eventjax bench --tpu                       the TPU table (by itself when the default device is a TPU)
  eventjax cache --clear                     delete the compiled kernels (numba, C++, CUDA)
  eventjax warm --backend numba --families csr,fcn   compile the standard kernels into the disk caches
  eventjax info --kernel binary_csrmv        the kernel each platform runs for it, and each wrapper around it
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
        from eventjax.backends import numba as numba_backend

        layer = numba_backend.threading_layer()
        return f'layer {layer!r}, {numba_backend.get_num_threads()} of {numba.config.NUMBA_NUM_THREADS} threads'
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
    ej.get_registry()  # the standard operators register when first used: count them too
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
    out.append(f'  numba threads      {ej.backends.numba.requested_num_threads() or "numba default"}')
    out.append(f'  pallas on cpu      {"interpret mode" if ej.backends.pallas.get_cpu_interpret() else "off"}')
    return out


def _info(args) -> int:
    if args.kernel is None:
        if args.backend is not None:
            print('eventjax info: --backend goes with --kernel NAME', file=sys.stderr)
            return 2
        print('\n'.join(info_lines()))
        return 0
    import eventjax as ej
    from eventjax.kernels.common.chain import kernel_chain

    ej.get_registry()  # the standard primitives register when first used
    try:
        print('\n'.join(kernel_chain(args.kernel, args.backend)))
    except ValueError as exc:
        print(f'eventjax info: {exc}', file=sys.stderr)
        return 2
    return 0


def _checkout() -> pathlib.Path | None:
    """The root of the eventjax checkout this package runs from, or None for an installed wheel."""
    root = pathlib.Path(__file__).resolve().parent.parent.parent
    if (root / 'pyproject.toml').is_file() and (root / 'benchmarks' / 'cli.py').is_file():
        return root
    return None


def _bench(argv: list[str]) -> int:
    root = _checkout()
    if root is None:
        print('eventjax bench: error: the benchmarks are not part of the installed package; they run from a '
              'checkout of eventjax: git clone the repository, pip install -e . in it, then run eventjax bench '
              '(or make bench) there.', file=sys.stderr)
        return 2
    if str(root) not in sys.path:
        sys.path.insert(0, str(root))
    import benchmarks.cli

    if pathlib.Path(benchmarks.cli.__file__).resolve().parent.parent != root:
        print(f'eventjax bench: error: the module benchmarks found on sys.path ({benchmarks.cli.__file__}) is not '
              f'the one of this checkout ({root}); remove the other one from PYTHONPATH.', file=sys.stderr)
        return 2
    return benchmarks.cli.main(argv)


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
    if args.clear:
        try:
            folders = cache.clear_cache(base)
        except OSError as exc:
            print(f'eventjax cache: error: {exc}', file=sys.stderr)
            return 1
    else:
        folders = cache.cache_folders(base)
    verb = 'deleted' if args.clear else 'holds'
    for folder in folders:
        print(f'{folder.role}\n  {folder.path}\n  {verb} {folder.files} file(s), {_size(folder.size_bytes)}')
    if not args.clear:
        print('(numba handlers follow NUMBA_CACHE_DIR, C++/CUDA libraries EVENTJAX_CACHE_DIR, else both '
              'XDG_CACHE_HOME; eventjax cache --clear deletes them)')
    return 0


def _warm(args) -> int:
    from eventjax.serving.disk_cache import FAMILIES, warm

    backends = [b.strip() for item in args.backend or ['numba'] for b in item.split(',') if b.strip()]
    families = [f.strip() for f in (args.families if args.families is not None else ','.join(FAMILIES)).split(',')
                if f.strip()]
    if not backends:
        print('eventjax warm: --backend names no backend; give one, for example --backend numba', file=sys.stderr)
        return 2
    if not families:
        print(f'eventjax warm: --families names no family; choose from {",".join(FAMILIES)} '
              '(for example --families csr,fcn)', file=sys.stderr)
        return 2
    failed = []

    def show(r) -> None:
        print(f'{r.family:<6}{r.operator:<16}{r.backend:<7}{r.seconds:7.1f} s' + (f'  {r.error}' if r.error else ''),
              flush=True)
        if r.error:
            failed.append(r)

    try:
        warm(backends, families, progress=show)
    except ValueError as exc:  # a bad flag, found before anything compiled
        print(f'eventjax {exc}', file=sys.stderr)
        return 2
    except OSError as exc:  # a cache that cannot be written, found before anything compiled
        print(f'eventjax warm: error: {exc}', file=sys.stderr)
        return 1
    return 1 if failed else 0


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog='eventjax', description=_DESCRIPTION, epilog=_EPILOG,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('--version', action='version', version=f'eventjax {__version__}')
    sub = parser.add_subparsers(dest='command', required=True)
    info = sub.add_parser('info', help='versions, devices, available backends and the configuration; '
                                       '--kernel NAME: what a call of primitive NAME runs, per platform')
    info.add_argument('--kernel', metavar='NAME', help='print the kernel each platform runs for primitive NAME '
                                                       'and every wrapper around it, with file and line')
    info.add_argument('--backend', metavar='NAME', help='with --kernel: that backend\'s kernels')
    cache = sub.add_parser('cache', help='where the compiled kernels (numba, C++, CUDA) are kept, their size; --clear')
    cache.add_argument('--clear', action='store_true', help='delete them (the next run compiles again)')
    warm = sub.add_parser('warm', help='compile the standard kernels into the disk caches ahead of time '
                                       '(container images, CI)')
    warm.add_argument('--backend', action='append', metavar='NAME',
                      help='a CPU backend to compile for (repeatable, or comma-separated; default: numba)')
    warm.add_argument('--families', metavar='LIST', default=None,
                      help='comma-separated families (default: dense,csr,fcn,jitc)')
    # Its options belong to the benchmarks of a checkout (benchmarks/cli.py); main() hands them over.
    sub.add_parser('bench', add_help=False, help='time the standard kernels against dense, the memory floor, '
                                                 'brainevent and scipy (from a checkout of eventjax)')
    return parser


def main(argv=None) -> int:
    """Entry point of the ``eventjax`` script and of ``python -m eventjax``."""
    argv = sys.argv[1:] if argv is None else list(argv)
    if argv[:1] == ['bench']:
        return _bench(argv[1:])
    args = _parser().parse_args(argv)
    if args.command == 'info':
        return _info(args)
    if args.command == 'warm':
        return _warm(args)
    return _cache(args)
