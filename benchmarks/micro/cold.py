"""Time to the first result, as a new user meets it: fresh processes, empty compile caches.

For each CPU backend and standard operator family (one event-driven vector
product each, at 4,000 neurons): the first jitted call in a fresh process
with empty ``NUMBA_CACHE_DIR`` and ``EVENTJAX_CACHE_DIR``, then the first
call of another fresh process that finds those caches filled; brainevent's
numba backend (when installed) on the same problems in the same run; the
median of five ``import eventjax`` (and ``import jax`` beside it); and
``docs/examples/cuba.py`` to its first printed line and its first result.

Run: ``python -m benchmarks.micro cold`` (all), or
``python -m benchmarks.micro.cold --backends numba --families csr --no-cuba``.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time

FAMILIES = ('dense', 'csr', 'fcn', 'jitc')
BACKENDS = ('numba', 'cpp', 'warp', 'jax')
N = 4000
ROOT = pathlib.Path(__file__).resolve().parents[2]  # the repository: src/ and docs/ are under it
# A fresh process builds one problem and times one jitted call; it prints the seconds as JSON.
_CHILD = textwrap.dedent('''
    import json, sys, time
    lib, backend, family, n = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    t0 = time.perf_counter()
    import jax, jax.numpy as jnp, numpy as np
    m = __import__(lib)
    t_import = time.perf_counter() - t0
    ops = {'dense': 'binary_densemv', 'csr': 'binary_csrmv', 'fcn': 'binary_fcnmv', 'jitc': 'binary_jitcmv'}
    if lib == 'eventjax' and backend not in m.get_registry()[ops[family]].available_backends('cpu'):
        print(json.dumps({'missing': True}))
        sys.exit(0)
    rng = np.random.default_rng(0)
    k = n // 50                                   # 2% connectivity
    idx = np.stack([rng.choice(n, k, replace=False) for _ in range(n)]).astype(np.int32)
    w = jnp.asarray(rng.random(n * k, dtype=np.float32))
    spikes = jnp.asarray(rng.random(n) < 0.02)
    kw = {} if backend == 'default' else {'backend': backend}
    if family == 'dense':
        dense = jnp.asarray(rng.random((n, n), dtype=np.float32))
        args, fn = (dense, spikes), lambda W, s: m.binary_densemv(W, s, transpose=True, **kw)
    elif family == 'csr':
        indptr = jnp.arange(0, n * k + 1, k, dtype=jnp.int32)
        args = (w, jnp.asarray(idx.ravel()), indptr, spikes)
        if lib == 'brainevent':
            from brainevent._csr.binary import _make_binary_csrmv_workspace
            ws = _make_binary_csrmv_workspace(indptr)
            fn = lambda d, i, p, s: m.binary_csrmv(d, i, p, s, shape=(n, n), transpose=True, workspace=ws, **kw)
        else:
            fn = lambda d, i, p, s: m.binary_csrmv(d, i, p, s, shape=(n, n), transpose=True, **kw)
    elif family == 'fcn':
        args = (w.reshape(n, k), jnp.asarray(idx), spikes)
        fn = lambda W, i, s: m.binary_fcnmv(W, i, s, shape=(n, n), transpose=True, **kw)
    else:
        args = (jnp.asarray([0.5], jnp.float32), spikes)
        if lib == 'brainevent':
            fn = lambda W, s: m.binary_jitsmv(W, 0.02, s, 7, shape=(n, n), transpose=True, **kw)
        else:
            fn = lambda W, s: m.binary_jitcmv(W, s, seed=7, prob=0.02, shape=(n, n), transpose=True, **kw)
    jax.block_until_ready(args)
    t1 = time.perf_counter()
    jax.block_until_ready(jax.jit(fn)(*args))
    print(json.dumps({'import': t_import, 'first': time.perf_counter() - t1}))
''')


def _env(cache: str) -> dict:
    env = dict(os.environ, NUMBA_CACHE_DIR=os.path.join(cache, 'numba'), EVENTJAX_CACHE_DIR=os.path.join(cache, 'ej'),
               PYTHONPATH=str(ROOT / 'src'))
    env.pop('JAX_ENABLE_X64', None)
    # An installed package has its bytecode compiled at install (see _compile_sources); an environment
    # that forbids writing it would time Python's compiler instead.
    env.pop('PYTHONDONTWRITEBYTECODE', None)
    return env


def _compile_sources() -> None:
    """Compile eventjax's bytecode once, as ``pip install`` does, so no timed process compiles Python source."""
    import compileall

    compileall.compile_dir(str(ROOT / 'src' / 'eventjax'), quiet=1)


def first_call(lib: str, backend: str, family: str, cache: str, timeout: float = 600) -> dict:
    """One fresh process: ``{'import': s, 'first': s}`` (or ``{'error': text}``) for one call with caches in ``cache``.

    Example:
        >>> with tempfile.TemporaryDirectory() as d:                     # doctest: +SKIP
        ...     first_call('eventjax', 'numba', 'csr', d)['first']
        9.1
    """
    proc = subprocess.run([sys.executable, '-c', _CHILD, lib, backend, family, str(N)], env=_env(cache),
                          capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        return {'error': (proc.stderr.strip().splitlines() or [f'exit status {proc.returncode}'])[-1]}
    return json.loads(proc.stdout.strip().splitlines()[-1])


def import_seconds(module: str, repeats: int = 5) -> float:
    """Median over ``repeats`` fresh processes of the time ``import module`` takes."""
    code = f'import time; t = time.perf_counter(); import {module}; print(time.perf_counter() - t)'
    times = []
    with tempfile.TemporaryDirectory() as cache:
        for _ in range(repeats):
            out = subprocess.run([sys.executable, '-c', code], env=_env(cache), capture_output=True, text=True,
                                 check=True, timeout=120)
            times.append(float(out.stdout.strip()))
    return statistics.median(times)


def cuba_seconds(backend: str, timeout: float = 600) -> tuple[float, float]:
    """Seconds from the start of ``cuba.py --backends backend`` (empty caches) to its first line and first result."""
    script = ROOT / 'docs' / 'examples' / 'cuba.py'
    with tempfile.TemporaryDirectory() as cache:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, str(script), '--backends', backend, '--duration', '10',
                                 '--raster', ''], env=_env(cache), stdout=subprocess.PIPE, text=True)
        try:
            first = time.perf_counter() - t0 if proc.stdout.readline() else float('nan')
            result = time.perf_counter() - t0 if proc.stdout.readline() else float('nan')
            proc.wait(timeout=timeout)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    return first, result


def _cell(r: dict, key: str) -> str:
    if 'missing' in r:
        return f'{"-":>8}'
    return f'{r[key]:8.2f}' if key in r else f'{"failed":>8}'


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog='python -m benchmarks.micro.cold', description=__doc__.splitlines()[0])
    parser.add_argument('--backends', nargs='+', default=list(BACKENDS), choices=BACKENDS)
    parser.add_argument('--families', nargs='+', default=list(FAMILIES), choices=FAMILIES)
    parser.add_argument('--no-brainevent', action='store_true')
    parser.add_argument('--no-cuba', action='store_true')
    parser.add_argument('--no-import', action='store_true')
    args = parser.parse_args(argv)
    import importlib.util
    _compile_sources()
    rows = [('eventjax', b) for b in args.backends]
    if not args.no_brainevent and importlib.util.find_spec('brainevent') is not None:
        rows.append(('brainevent', 'numba'))
    print(f'cold start, {N} neurons, 2% connectivity, 2% events, transpose=True (seconds; empty caches, '
          'then a fresh process with those caches filled)')
    print(f'{"library":<11}{"backend":<8}{"family":<7}{"first":>8}{"warm":>8}')
    for lib, backend in rows:
        for family in args.families:
            with tempfile.TemporaryDirectory() as cache:
                cold = first_call(lib, backend, family, cache)
                warm = cold if 'error' in cold or 'missing' in cold else first_call(lib, backend, family, cache)
            line = f'{lib:<11}{backend:<8}{family:<7}{_cell(cold, "first")}{_cell(warm, "first")}'
            print(line + (f'  ({cold["error"][:90]})' if 'error' in cold else ''), flush=True)
    print('(-: the operator has no kernel for that backend)')
    if not args.no_import:
        print(f'import eventjax {import_seconds("eventjax"):.2f} s, import jax {import_seconds("jax"):.2f} s '
              '(medians of 5 fresh processes)', flush=True)
    if not args.no_cuba:
        for backend in args.backends:
            first, result = cuba_seconds(backend)
            print(f'cuba.py --backends {backend}: first line {first:.2f} s, first result {result:.2f} s', flush=True)


if __name__ == '__main__':
    main()
