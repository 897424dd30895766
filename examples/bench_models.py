"""``make bench-models``: PD14 and Brette's CUBA / COBA on NEST and on eventjax, one after the other, one table.

``python -m examples.bench_models [--scale 0.1] [--k-scale 1] [--t-sim 1000] [--threads 2] [--out FILE]``

Every run is a process of its own (its peak RSS is its own), started one
after the other on the same threads: NEST's reference PD14 (the
``microcircuit`` package) and eventjax's PD14 on each CPU backend at the
same scale, drive and model time; then Brette's CUBA and COBA (NEST's
example network on 1 and on ``--threads`` threads, eventjax on each
backend, float64). With a TPU there (or ``--tpu``) each model runs again
on it with ``pallas`` and ``jax`` (Brette's in float32), and the CPU runs
are pinned to the CPU; each row names its device. The table goes to stdout
and, in Markdown, to ``--out``.
Full scale (``--scale 1``) needs NEST's ~15 GB and 4 threads; run it alone.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time

PD14_BACKENDS = ('numba', 'jax', 'warp')
BRETTE_BACKENDS = ('numba', 'cpp', 'jax', 'warp')
TPU_BACKENDS = ('pallas', 'jax')  # with a TPU there (or --tpu): these rows again on the TPU


def run_json(args, threads, timeout, platform=None):
    """Run ``python -m <args>`` with ``threads`` threads; its last JSON line, or ``{'error': ...}``.

    ``platform`` pins JAX to it (``JAX_PLATFORMS``): with a TPU there, the CPU rows must not take it.
    """
    env = dict(os.environ, NUMBA_NUM_THREADS=str(threads), OMP_NUM_THREADS=str(threads),
               XLA_FLAGS=f'--xla_cpu_multi_thread_eigen=true intra_op_parallelism_threads={threads}')
    if platform:
        env['JAX_PLATFORMS'] = platform
    try:
        out = subprocess.run([sys.executable, '-m', *args], env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {'error': f'timed out after {timeout} s'}
    lines = [ln for ln in out.stdout.splitlines() if ln.startswith('{')]
    if out.returncode or not lines:
        return {'error': (out.stderr or out.stdout).strip().splitlines()[-1:] or ['failed']}
    return json.loads(lines[-1])


def find_tpu(timeout=300):
    """The kind of the TPU JAX sees (``'TPU v5 lite'``), or None; asked in a process of its own, which lets
    the chip go again (one program holds a TPU at a time)."""
    code = 'import jax; d = jax.devices()[0]; print(d.platform, d.device_kind, sep="|")'
    try:
        out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    platform, _, kind = (out.stdout.strip().splitlines() or [''])[-1].partition('|')
    return kind if out.returncode == 0 and platform == 'tpu' else None


def on_tpu(result, kind):
    """``result`` marked as run on the TPU ``kind`` (the tables name the device of such rows)."""
    return dict(result, device=kind)


def pd14_rows(a):
    common = ['--scale', str(a.scale), '--t-sim', str(a.t_sim), '--t-presim', str(a.t_presim), '--drive', a.drive]
    if a.k_scale is not None:
        common += ['--k-scale', str(a.k_scale)]
    runs = [('NEST', ['examples.microcircuit.nest_reference', *common, '--threads', str(a.threads)])]
    runs += [(b, ['examples.microcircuit', *common, '--backend', b, '--quiet', '--json']) for b in a.backends]
    rows = []
    for label, cmd in runs:
        print(f'  PD14 {label} ...', file=sys.stderr, flush=True)
        rows.append((label, run_json(cmd, a.threads, a.timeout, 'cpu' if a.tpu_kind else None)))
    for b in TPU_BACKENDS if a.tpu_kind else ():
        print(f'  PD14 {b} on {a.tpu_kind} ...', file=sys.stderr, flush=True)
        r = run_json(['examples.microcircuit', *common, '--backend', b, '--quiet', '--json'], a.threads, a.timeout,
                     'tpu')
        rows.append((f'{b} on {a.tpu_kind}', on_tpu(r, a.tpu_kind)))
    return rows


def brette_rows(a):
    rows = []
    for m in ('cuba', 'coba'):
        for threads in sorted({1, a.threads}):
            print(f'  {m} NEST {threads} thread(s) ...', file=sys.stderr, flush=True)
            r = run_json(['examples.brette2007.nest_run', '--model', m, '--t-sim', str(a.brette_t_sim),
                          '--threads', str(threads)], threads, a.timeout, 'cpu' if a.tpu_kind else None)
            rows.append((m, f'NEST, {threads} thread{"s" if threads > 1 else ""}', r))
        for b in BRETTE_BACKENDS:
            print(f'  {m} eventjax {b} ...', file=sys.stderr, flush=True)
            r = run_json(['examples.brette2007', '--model', m, '--t-sim', str(a.brette_t_sim), '--backend', b,
                          '--json'], a.threads, a.timeout, 'cpu' if a.tpu_kind else None)
            rows.append((m, f'eventjax {b}', r))
        for b in TPU_BACKENDS if a.tpu_kind else ():  # a TPU has no float64
            print(f'  {m} eventjax {b} on {a.tpu_kind} ...', file=sys.stderr, flush=True)
            r = run_json(['examples.brette2007', '--model', m, '--t-sim', str(a.brette_t_sim), '--backend', b,
                          '--dtype', 'float32', '--json'], a.threads, a.timeout, 'tpu')
            rows.append((m, f'eventjax {b} on {a.tpu_kind}, float32', on_tpu(r, a.tpu_kind)))
    return rows


def fmt(x, spec):
    return format(x, spec) if isinstance(x, (int, float)) else '-'


def table(a, pd14, brette, load):
    """The Markdown table of the runs made: PD14's rows, then Brette's; a part skipped has no heading."""
    parts = []
    if pd14:
        parts.append(pd14_table(a, pd14, load))
    if brette:
        parts.append(brette_table(a, brette))
    return '\n\n'.join(parts)


def pd14_table(a, pd14, load):
    out = [f'PD14, scale {a.scale:g} (K {a.k_scale if a.k_scale is not None else a.scale:g}), {a.drive} drive, '
           f'{a.t_presim:g} ms warm-up + {a.t_sim:g} ms, {a.threads} threads, on the CPU unless a row names its '
           f'device; load average before: {load}', '',
           '| simulator | synapses | construction (s) | RTF | peak RSS (GB) | rates L23E L23I L4E L4I L5E L5I L6E L6I '
           '(Hz) |', '|---|---|---|---|---|---|']
    nest = dict(pd14).get('NEST', {})
    for label, r in pd14:
        if 'error' in r:
            out.append(f'| {label} | failed: {r["error"]} | | | | |')
            continue
        rel = ''
        if label != 'NEST' and isinstance(nest.get('rtf'), float):
            rel = (f' ({r["construction_s"] / nest["construction_s"]:.2f}x, RTF {r["rtf"] / nest["rtf"]:.3f}x, '
                   f'RSS {r["peak_rss_gb"] / nest["peak_rss_gb"]:.2f}x NEST)')
        where = f' on {r["device"]}' if 'device' in r else ''
        out.append(f'| {r["simulator"]}{where}{rel} | {r["synapses"]:,} | {fmt(r["construction_s"], ".1f")} | '
                   f'{fmt(r["rtf"], ".2f")} | {fmt(r["peak_rss_gb"], ".2f")} | '
                   f'{" ".join(f"{x:.2f}" for x in r["rates"])} |')
    return '\n'.join(out)


def brette_table(a, brette):
    out = [f'Brette et al. 2007, {a.brette_t_sim:g} ms (eventjax in float64)', '',
            '| model | simulator | wall per model second (s) | / NEST 1 thread | rates E, I (Hz) |',
            '|---|---|---|---|---|']
    for m in ('cuba', 'coba'):
        single = next((r for mm, lab, r in brette if mm == m and lab == 'NEST, 1 thread'), {})
        for mm, label, r in brette:
            if mm != m:
                continue
            if 'error' in r:
                out.append(f'| {m.upper()} | {label} | failed: {r["error"]} | | |')
                continue
            ratio = r['s_per_model_s'] / single['s_per_model_s'] if 's_per_model_s' in single else None
            out.append(f'| {m.upper()} | {label} | {r["s_per_model_s"]:.3f} | {fmt(ratio, ".3f")} | '
                       f'{r["rate_e"]:.2f}, {r["rate_i"]:.2f} |')
    return '\n'.join(out)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--scale', type=float, default=0.1)
    parser.add_argument('--k-scale', type=float, default=1.0, help='K_scaling (default 1: full in-degrees)')
    parser.add_argument('--t-sim', type=float, default=1000.0)
    parser.add_argument('--t-presim', type=float, default=500.0)
    parser.add_argument('--drive', choices=('dc', 'poisson'), default='dc')
    parser.add_argument('--threads', type=int, default=2)
    parser.add_argument('--backends', nargs='+', default=list(PD14_BACKENDS))
    parser.add_argument('--brette-t-sim', type=float, default=1000.0)
    parser.add_argument('--skip', nargs='*', default=[], choices=('pd14', 'brette', 'tpu'))
    parser.add_argument('--tpu', action='store_true', help='add the TPU rows (pallas and jax) without looking '
                                                           'for a TPU first (default: when JAX sees one)')
    parser.add_argument('--timeout', type=float, default=3600.0, help='per run (s)')
    parser.add_argument('--out', default='', help='also write the Markdown table here')
    a = parser.parse_args(argv)
    a.tpu_kind = None
    if 'tpu' not in a.skip:
        a.tpu_kind = find_tpu() or ('TPU' if a.tpu else None)
    load = ' '.join(f'{x:.1f}' for x in os.getloadavg())
    start = time.perf_counter()
    pd14 = pd14_rows(a) if 'pd14' not in a.skip else []
    brette = brette_rows(a) if 'brette' not in a.skip else []
    text = table(a, pd14, brette, load)
    text += f'\n\nload average after: {" ".join(f"{x:.1f}" for x in os.getloadavg())}; ' \
            f'{time.perf_counter() - start:.0f} s in all'
    print(text)
    if a.out:
        with open(a.out, 'w') as f:
            f.write(text + '\n')
    return 0


if __name__ == '__main__':
    raise SystemExit(main())
