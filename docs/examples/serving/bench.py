"""The long serving benchmark (``make serve-bench``): a table and a plot of latency against concurrency.

It starts the example server as a subprocess and measures, over HTTP on
127.0.0.1:

1. first-request latency without and with the start-up warm-up;
2. throughput, p50 and p99 per endpoint and backend at 1, 2, 4, 8 and 32
   clients, every answer checked against NumPy, while the global backend is
   flipped, bad requests are sent and a few clients disconnect mid-request
   (the load generator of ``loadgen.py``);
3. ``/product`` against ``/product/batched`` (the dynamic batcher) at 8 and
   32 clients, and the same comparison in-process with threads, where the
   per-call dispatch cost is not hidden behind HTTP;
4. the server's RSS after warm-up and after ``--rss-requests`` more requests.

Results go to ``--out`` (default ``docs/_static/serving``): ``serve_bench.txt``,
``serve_bench.json`` and ``serve_bench.png``.
"""

from __future__ import annotations

import argparse
import asyncio
import concurrent.futures
import json
import pathlib
import platform
import sys
import threading
import time

import httpx
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import loadgen  # noqa: E402
import network  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[3]


def first_request(server_args: list[str], warm: bool) -> dict:
    """Seconds from start-up to ready, and of the first ``/product`` and ``/step`` requests."""
    args = server_args + ([] if warm else ['--no-warmup'])
    start = time.perf_counter()
    with loadgen.running_server(*args) as (url, _):
        ready = time.perf_counter() - start
        out = {'warmup': warm, 'ready_s': ready}
        # One client, connected before timing: a new httpx client costs ~0.2 s (its SSL context).
        with httpx.Client(base_url=url, timeout=600) as client:
            client.get('/health').raise_for_status()
            for path, body in (('/product', {'spikes': [1, 2, 3]}), ('/step', {'spikes': [1, 2, 3]})):
                for label in ('first', 'second'):
                    t = time.perf_counter()
                    client.post(path, json=body).raise_for_status()
                    out[f'{path} {label} ms'] = (time.perf_counter() - t) * 1e3
    return out


def rss_mb(proc) -> float:
    import psutil

    return psutil.Process(proc.pid).memory_info().rss / 2**20


async def drive(url: str, requests: int, clients: int, n: int) -> int:
    """Send ``requests`` good ``/product`` requests from ``clients`` connections; return the failure count."""
    body = {'spikes': list(range(0, n, 7))}
    counter, failures = iter(range(requests)), 0

    async def one(client):
        nonlocal failures
        for _ in counter:
            try:
                r = await client.post('/product', json=body)
            except httpx.HTTPError:  # a dropped connection counts, and the run goes on
                failures += 1
                continue
            failures += r.status_code != 200

    async with httpx.AsyncClient(base_url=url, timeout=120) as client:
        await asyncio.gather(*(one(client) for _ in range(clients)))
    return failures


def in_process_batching(n: int, clients: list[int], seconds: float) -> list[dict]:
    """Threads calling ``product`` directly versus through a DynamicBatcher (no HTTP in between)."""
    import jax.numpy as jnp

    from eventjax.serving import DynamicBatcher

    fns = network.jax_functions(network.make_network(n))
    batcher = DynamicBatcher(fns['product_rows'], max_batch=32, max_wait_s=300e-6)
    spikes = np.zeros(n, bool)
    spikes[::7] = True
    np.asarray(fns['product'](jnp.asarray(spikes)))
    batcher.warmup(spikes)
    rows = []
    for mode in ('direct', 'batched'):
        call = (lambda: np.asarray(fns['product'](jnp.asarray(spikes)))) if mode == 'direct' else \
            (lambda: batcher(spikes))
        for k in clients:
            lat, stop = [], time.perf_counter() + seconds
            lock = threading.Lock()

            def worker(lat=lat, stop=stop, lock=lock, call=call):
                mine = []
                while time.perf_counter() < stop:
                    t = time.perf_counter()
                    call()
                    mine.append(time.perf_counter() - t)
                with lock:
                    lat.extend(mine)

            with concurrent.futures.ThreadPoolExecutor(k) as pool:
                list(pool.map(lambda _: worker(), range(k)))
            ms = np.asarray(lat) * 1e3
            rows.append({'mode': mode, 'clients': k, 'calls_per_s': ms.size / seconds,
                         'p50_ms': float(np.percentile(ms, 50)), 'p99_ms': float(np.percentile(ms, 99))})
    batcher.close()
    return rows


def plot(rows: list[dict], path: pathlib.Path) -> None:
    import matplotlib

    matplotlib.use('Agg')
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5))
    for i, endpoint in enumerate(sorted({r['endpoint'] for r in rows})):
        mine = sorted((r for r in rows if r['endpoint'] == endpoint and r['backend'] == 'default'),
                      key=lambda r: r['clients'])
        x = [r['clients'] for r in mine]
        color = f'C{i}'
        ax.plot(x, [r['p50_ms'] for r in mine], '-o', color=color, label=f'{endpoint} p50')
        ax.plot(x, [r['p99_ms'] for r in mine], '--s', color=color, label=f'{endpoint} p99')
    ax.set(xscale='log', yscale='log', xlabel='concurrent clients', ylabel='latency (ms)',
           title='eventjax serving example (default backend)')
    ax.set_xticks([1, 2, 4, 8, 32], ['1', '2', '4', '8', '32'])
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=90)
    plt.close(fig)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--neurons', type=int, default=4000)
    parser.add_argument('--seconds', type=float, default=10.0, help='per concurrency level')
    parser.add_argument('--clients', type=int, nargs='+', default=[1, 2, 4, 8, 32])
    parser.add_argument('--backends', nargs='+', default=['numba'], help='per-request backends served')
    parser.add_argument('--droppers', type=int, default=2,
                        help='clients that disconnect mid-request during the latency levels')
    parser.add_argument('--rss-requests', type=int, default=100_000, help='requests between the RSS samples')
    parser.add_argument('--no-first-request', dest='first_request', action='store_false',
                        help='skip the first-request measurement (two extra server start-ups)')
    parser.add_argument('--out', default=str(ROOT / 'docs' / '_static' / 'serving'))
    args = parser.parse_args(argv)
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    server_args = ['--neurons', str(args.neurons), '--backends', *args.backends]
    report = {'machine': f'{platform.node()}: {platform.processor() or platform.machine()}, '
                         f'{__import__("os").cpu_count()} cpus, python {platform.python_version()}',
              'neurons': args.neurons}

    report['first_request'] = [first_request(server_args, warm) for warm in (False, True)] \
        if args.first_request else []
    print(json.dumps(report['first_request'], indent=1), flush=True)

    with loadgen.running_server(*server_args) as (url, proc):
        report['rss_after_warmup_mb'] = rss_mb(proc)
        backends = [None, *args.backends]
        load = asyncio.run(loadgen.run_load(url, args.clients, args.seconds, backends=backends,
                                            droppers=args.droppers))
        report['rows'], report['bad'] = load['rows'], load['bad']
        print(loadgen.table(load['rows']), '\n', load['bad'], flush=True)
        # Backend flips recompile everything, so they get their own level, out of the latency figures.
        flips = asyncio.run(loadgen.run_load(url, [8], args.seconds, backends=backends, flips=3))
        report['flip_rows'], report['flip_bad'] = flips['rows'], flips['bad']
        print(loadgen.table(flips['rows']), '\n', flips['bad'], flush=True)
        batching = []
        for endpoint in ('/product', '/product/batched'):
            res = asyncio.run(loadgen.run_load(url, [8, 32], args.seconds, endpoints=[endpoint]))
            batching += res['rows']
        report['batching_http'] = batching
        print(loadgen.table(batching), flush=True)
        report['rss_before_mb'] = rss_mb(proc)
        t = time.perf_counter()
        failures = asyncio.run(drive(url, args.rss_requests, 16, args.neurons))
        report['rss'] = {'requests': args.rss_requests, 'seconds': time.perf_counter() - t, 'failures': failures,
                         'before_mb': report['rss_before_mb'], 'after_mb': rss_mb(proc)}
        print('rss', report['rss'], flush=True)
    report['batching_in_process'] = in_process_batching(args.neurons, [8, 32], args.seconds)

    (out / 'serve_bench.json').write_text(json.dumps(report, indent=1))
    lines = [f'machine: {report["machine"]}', f'neurons: {args.neurons}', '', 'first request:']
    lines += [f'  {r}' for r in report['first_request']]
    lines += ['', loadgen.table(report['rows']), f'bad requests: {report["bad"]}', '',
              'while the global backend is flipped 3 times:', loadgen.table(report['flip_rows']),
              f'bad requests and flips: {report["flip_bad"]}', '',
              'HTTP, default backend, /product vs /product/batched:', loadgen.table(report['batching_http']), '',
              'in-process threads, direct vs batched:']
    lines += [f'  {r["mode"]:<8} {r["clients"]:>3} clients {r["calls_per_s"]:>9.0f} calls/s '
              f'p50 {r["p50_ms"]:.3f} ms p99 {r["p99_ms"]:.3f} ms' for r in report['batching_in_process']]
    lines += ['', f'RSS: {report["rss_after_warmup_mb"]:.0f} MB after warm-up; {report["rss"]}']
    (out / 'serve_bench.txt').write_text('\n'.join(lines) + '\n')
    plot(report['rows'], out / 'serve_bench.png')
    print('\n'.join(lines))
    bad = [r for r in report['rows'] + report['flip_rows'] if r['wrong'] or r['server_errors'] or r['hung']]
    return 1 if bad or report['bad']['not_clean'] or report['flip_bad']['not_clean'] or report['bad']['drop_wrong'] \
        else 0


if __name__ == '__main__':
    raise SystemExit(main())
