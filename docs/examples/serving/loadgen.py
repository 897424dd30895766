"""A load generator for the serving example: real HTTP clients, every answer checked against NumPy.

``run_load(url, clients=[1, 2, 4, 8, 32], seconds=5)`` drives a running
server over the network with ``httpx`` (async, one connection per client).
Each good request picks an endpoint and a backend, posts random spikes and
checks the answer against :mod:`network`'s NumPy model; one that takes
longer than ``HANG_S`` counts as hung. Meanwhile one client flips the
server's global backend through ``/admin/backend``, another sends bad
requests (a wrong length, an index out of range, an unknown backend, a
non-finite state), which must get a 4xx answer with the error text, and
``droppers`` clients post good requests and disconnect after a few
milliseconds, before most answers come (what an impatient client or a
proxy timeout does); the answers that do reach them must be right too.

``running_server(...)`` starts the server as a subprocess on a free port and
always kills it, also on failure. From the command line::

    python docs/examples/serving/loadgen.py --url http://127.0.0.1:8000 --clients 1 8 32
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import json
import os
import pathlib
import random
import signal
import socket
import subprocess
import sys
import time

import httpx
import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).parent))
import network  # noqa: E402

HERE = pathlib.Path(__file__).parent
BAD_REQUESTS = [
    ('/product', {'spikes': [0, 10 ** 9]}),  # index out of range
    ('/product', {'spikes': [-1]}),
    ('/step', {'spikes': [0], 'v': [0.0, 1.0]}),  # wrong length
    ('/product', {'spikes': [1], 'backend': 'no-such-backend'}),
    ('/step', {'spikes': 'not a list'}),
    ('/step', {'spikes': [0], 'ge': [float('nan')]}),  # sent as a literal NaN
]
HANG_S = 60.0  # a good request not answered within this is hung


def free_port() -> int:
    with socket.socket() as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def running_server(*args: str, startup_timeout: float = 240.0, log=None):
    """Start ``app.py`` with ``args`` on a free port; yield ``(url, process)``; always stop it."""
    port = free_port()
    cmd = [sys.executable, str(HERE / 'app.py'), '--port', str(port), *args]
    proc = subprocess.Popen(cmd, stdout=log or subprocess.DEVNULL, stderr=subprocess.STDOUT,
                            start_new_session=True)
    url = f'http://127.0.0.1:{port}'
    try:
        deadline = time.monotonic() + startup_timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f'running_server(): the server exited with {proc.returncode} during start-up.')
            try:
                if httpx.get(f'{url}/health', timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() > deadline:
                raise TimeoutError(f'running_server(): no answer from {url}/health within {startup_timeout} s.')
            time.sleep(0.25)
        yield url, proc
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


class Checker:
    """NumPy answers for the served network."""

    def __init__(self, net: dict) -> None:
        self.net = net
        self.n = net['n']

    def good_request(self, rng: random.Random, endpoint: str, backend: str | None) -> tuple[str, dict]:
        spikes = sorted(rng.sample(range(self.n), rng.randint(0, self.n // 10)))
        body = {'spikes': spikes}
        if endpoint == '/step':
            body['v'] = np.random.default_rng(rng.getrandbits(32)).uniform(-60.0, -49.0, self.n).tolist()
        if backend is not None:
            body['backend'] = backend
        return endpoint, body

    def correct(self, endpoint: str, body: dict, answer: dict) -> bool:
        s = np.zeros(self.n, bool)
        s[body['spikes']] = True
        if endpoint in ('/product', '/product/batched'):
            return np.allclose(answer['y'], network.numpy_input(self.net, s), atol=1e-4)
        zeros = np.zeros(self.n)
        v, ge, gi, fired, v_free = network.numpy_step(self.net, np.asarray(body['v']), zeros, zeros, s)
        got = np.zeros(self.n, bool)
        got[answer['spikes']] = True
        # float32 on the server: a potential within rounding of the threshold may go either way.
        near = np.abs(v_free - network.V_T) < 1e-3
        return bool(np.all((got == fired) | near)
                    and np.allclose(np.where(near, 0, answer['v']), np.where(near, 0, v), atol=1e-3)
                    and np.allclose(answer['ge'], ge, atol=1e-3) and np.allclose(answer['gi'], gi, atol=1e-3))


def _no_constant(name: str):
    raise ValueError(f'the answer holds {name}, which strict JSON parsers reject')


def strict_json(r: httpx.Response):
    """The body of ``r`` as JSON, refusing the NaN and Infinity that Python's parser would let through."""
    return json.loads(r.text, parse_constant=_no_constant)


def _summary(latencies: list[float], wall: float) -> dict:
    lat = np.asarray(latencies) * 1e3
    return {'requests': int(lat.size), 'throughput': lat.size / wall if wall else 0.0,
            'p50_ms': float(np.percentile(lat, 50)) if lat.size else float('nan'),
            'p99_ms': float(np.percentile(lat, 99)) if lat.size else float('nan')}


def _answer_ok(checker, path: str, body: dict, r: httpx.Response) -> bool:
    try:
        return checker.correct(path, body, strict_json(r))
    except ValueError:  # not strict JSON
        return False


async def _level(client, checker, n_clients, seconds, endpoints, backends, flips, bad, seed, droppers):
    stats = {}  # (endpoint, backend) -> dict
    deadline = time.perf_counter() + seconds

    async def good(i):
        rng = random.Random(seed * 1000 + i)
        choices = itertools.cycle([(e, b) for e in endpoints for b in backends])
        for _ in range(i):
            next(choices)
        while time.perf_counter() < deadline:
            endpoint, backend = next(choices)
            path, body = checker.good_request(rng, endpoint, backend)
            row = stats.setdefault((endpoint, backend or 'default'),
                                   {'lat': [], 'errors': 0, 'server_errors': 0, 'wrong': 0, 'hung': 0})
            start = time.perf_counter()
            try:
                r = await asyncio.wait_for(client.post(path, json=body), HANG_S)
            except TimeoutError:
                row['hung'] += 1
                continue
            except httpx.HTTPError:
                row['errors'] += 1
                continue
            row['lat'].append(time.perf_counter() - start)
            if r.status_code >= 500:
                row['server_errors'] += 1
            if r.status_code != 200:
                row['errors'] += 1
            elif not _answer_ok(checker, path, body, r):
                row['wrong'] += 1

    async def flipper():
        names = [b for b in backends if b is not None] + [None]
        for k in range(flips):
            await asyncio.sleep(seconds / (flips + 1))
            r = await client.post('/admin/backend', json={'backend': names[k % len(names)]})
            bad['flips'] += r.status_code == 200
            bad['flip_errors'] += r.status_code != 200

    async def bad_client():
        for k in itertools.count():
            if time.perf_counter() >= deadline:
                return
            path, body = BAD_REQUESTS[k % len(BAD_REQUESTS)]
            # json.dumps writes a NaN as the literal NaN (httpx's json= would refuse to send it).
            r = await client.post(path, content=json.dumps(body), headers={'content-type': 'application/json'})
            try:
                clean = 400 <= r.status_code < 500 and bool(strict_json(r).get('detail'))
            except ValueError:
                clean = False
            bad['clean_4xx' if clean else 'not_clean'] += 1
            await asyncio.sleep(0.2)  # a trickle: they test the answers, not the throughput

    async def dropper(i):
        rng = random.Random(seed * 7919 + i)
        # A client of its own: a request abandoned mid-flight closes its connection, which the server sees.
        async with httpx.AsyncClient(base_url=client.base_url, timeout=HANG_S) as own:
            while time.perf_counter() < deadline:
                path, body = checker.good_request(rng, rng.choice(endpoints), rng.choice(backends))
                try:
                    r = await asyncio.wait_for(own.post(path, json=body), 10 ** rng.uniform(-3, -0.3))  # 1-500 ms
                except TimeoutError:
                    bad['dropped'] += 1
                    continue
                except httpx.HTTPError:
                    bad['drop_errors'] += 1
                    continue
                bad['drop_answered'] += 1
                bad['drop_wrong'] += r.status_code != 200 or not _answer_ok(checker, path, body, r)

    start = time.perf_counter()
    await asyncio.gather(*(good(i) for i in range(n_clients)), *(dropper(i) for i in range(droppers)),
                         flipper(), bad_client())
    wall = time.perf_counter() - start
    out = []
    for (endpoint, backend), row in sorted(stats.items()):
        out.append({'clients': n_clients, 'endpoint': endpoint, 'backend': backend, **_summary(row['lat'], wall),
                    'errors': row['errors'], 'server_errors': row['server_errors'], 'wrong': row['wrong'],
                    'hung': row['hung']})
    return out


async def run_load(url: str, clients=(1, 2, 4, 8, 32), seconds: float = 5.0,
                   endpoints=('/product', '/product/batched', '/step'), backends=(None,),
                   flips: int = 0, seed: int = 0, droppers: int = 0) -> dict:
    """Drive the server at each concurrency for ``seconds``; return the rows and the bad-request counts.

    ``droppers`` more clients at every level post good requests and disconnect before most answers come.
    """
    limits = httpx.Limits(max_connections=max(clients) + 4, max_keepalive_connections=max(clients) + 4)
    async with httpx.AsyncClient(base_url=url, timeout=120, limits=limits) as client:
        net = (await client.get('/network')).json()
        checker = Checker({k: (np.asarray(v) if isinstance(v, list) else v) for k, v in net.items()})
        bad = {'clean_4xx': 0, 'not_clean': 0, 'flips': 0, 'flip_errors': 0,
               'dropped': 0, 'drop_answered': 0, 'drop_wrong': 0, 'drop_errors': 0}
        rows = []
        for level, n in enumerate(clients):
            rows += await _level(client, checker, n, seconds, endpoints, list(backends),
                                 flips if level == len(clients) - 1 else 0, bad, seed + level, droppers)
    return {'rows': rows, 'bad': bad}


def table(rows: list[dict]) -> str:
    """The rows as a fixed-width text table."""
    head = f'{"clients":>7} {"endpoint":<17} {"backend":<8} {"req":>6} {"req/s":>8} {"p50 ms":>8} {"p99 ms":>8} ' \
           f'{"err":>4} {"5xx":>4} {"wrong":>5} {"hung":>4}'
    lines = [head]
    for r in rows:
        lines.append(f'{r["clients"]:>7} {r["endpoint"]:<17} {r["backend"]:<8} {r["requests"]:>6} '
                     f'{r["throughput"]:>8.1f} {r["p50_ms"]:>8.2f} {r["p99_ms"]:>8.2f} {r["errors"]:>4} '
                     f'{r["server_errors"]:>4} {r["wrong"]:>5} {r.get("hung", 0):>4}')
    return '\n'.join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument('--url', default='http://127.0.0.1:8000')
    parser.add_argument('--clients', type=int, nargs='+', default=[1, 2, 4, 8, 32])
    parser.add_argument('--seconds', type=float, default=5.0, help='per concurrency level')
    parser.add_argument('--backends', nargs='+', default=['default'], help="'default' sends no backend")
    parser.add_argument('--flips', type=int, default=3, help='global backend changes during the last level')
    parser.add_argument('--droppers', type=int, default=2,
                        help='clients that disconnect mid-request, at every level')
    parser.add_argument('--json', help='also write the results here')
    args = parser.parse_args(argv)
    backends = [None if b == 'default' else b for b in args.backends]
    result = asyncio.run(run_load(args.url, args.clients, args.seconds, backends=backends, flips=args.flips,
                                  droppers=args.droppers))
    print(table(result['rows']))
    print('bad requests:', result['bad'])
    if args.json:
        pathlib.Path(args.json).write_text(json.dumps(result, indent=1))
    bad_rows = [r for r in result['rows'] if r['wrong'] or r['server_errors'] or r['hung']]
    return 1 if bad_rows or result['bad']['not_clean'] or result['bad']['drop_wrong'] else 0


if __name__ == '__main__':
    raise SystemExit(main())
