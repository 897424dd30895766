"""The serving example under a short real load: a server subprocess, HTTP clients, NumPy-checked answers."""

import asyncio
import pathlib
import random
import sys
import time

import numpy as np
import pytest

pytest.importorskip('fastapi', reason="the 'serve' extra is not installed (make setup installs it)")
httpx = pytest.importorskip('httpx', reason="the 'loadtest' extra is not installed (make setup installs it)")

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / 'docs' / 'examples' / 'serving'))
import loadgen  # noqa: E402

CLIENTS = [1, 2, 4, 8, 32]


@pytest.fixture(scope='module')
def load_result(tmp_path_factory):
    log = (tmp_path_factory.mktemp('server') / 'server.log').open('w')
    start = time.monotonic()
    with loadgen.running_server('--neurons', '200', '--backends', 'numba', '--max-batch', '8', log=log) as (url, _):
        result = asyncio.run(loadgen.run_load(url, CLIENTS, seconds=1.0, backends=[None, 'numba'], flips=2,
                                              droppers=2))
        # After clients vanished mid-request, the batcher must still answer, and right.
        with httpx.Client(base_url=url, timeout=60) as client:
            net = {k: (np.asarray(v) if isinstance(v, list) else v) for k, v in client.get('/network').json().items()}
            checker = loadgen.Checker(net)
            path, body = checker.good_request(random.Random(1), '/product/batched', None)
            r = client.post(path, json=body)
            result['after'] = r.status_code == 200 and checker.correct(path, body, r.json())
            result['health'] = client.get('/health').json()
    result['seconds'] = time.monotonic() - start
    return result


class TestShortLoad:
    def test_every_good_answer_is_right_and_none_is_a_server_error(self, load_result):
        rows = load_result['rows']
        assert rows, 'no request completed'
        assert sum(r['wrong'] for r in rows) == 0, loadgen.table(rows)
        assert sum(r['server_errors'] for r in rows) == 0, loadgen.table(rows)
        assert sum(r['errors'] for r in rows) == 0, loadgen.table(rows)

    def test_each_concurrency_endpoint_and_backend_got_answers(self, load_result):
        seen = {(r['clients'], r['endpoint'], r['backend']) for r in load_result['rows'] if r['requests']}
        want = {(c, e, b) for c in CLIENTS for e in ('/product', '/product/batched', '/step')
                for b in ('default', 'numba')}
        # One client cycles through endpoints and backends, so at low concurrency all appear as well.
        assert want <= seen

    def test_bad_requests_get_clean_4xx_answers(self, load_result):
        bad = load_result['bad']
        assert bad['clean_4xx'] >= len(loadgen.BAD_REQUESTS)
        assert bad['not_clean'] == 0

    def test_the_global_backend_was_flipped_while_serving(self, load_result):
        assert load_result['bad']['flips'] == 2
        assert load_result['bad']['flip_errors'] == 0

    def test_clients_that_disconnect_mid_request_leave_no_wrong_or_hung_answer(self, load_result):
        rows, bad = load_result['rows'], load_result['bad']
        assert bad['dropped'] > 0, bad  # requests really were abandoned mid-flight
        assert bad['drop_wrong'] == 0, bad
        assert sum(r['hung'] for r in rows) == 0, loadgen.table(rows)
        assert sum(r['wrong'] for r in rows) == 0, loadgen.table(rows)
        assert load_result['after'], 'the batched endpoint did not answer right after the disconnects'
        assert load_result['health']['status'] == 'ok'


class TestDisconnects:
    def test_a_client_that_disconnects_cancels_its_batched_request_and_the_batcher_serves_on(self, tmp_path):
        # A batch larger than the three requests and a 2 s batching wait keep each request queued until
        # its client has left: none of them can be answered before the server sees its client go.
        log = (tmp_path / 'server.log').open('w')
        with loadgen.running_server('--neurons', '200', '--backends', 'jax', '--max-batch', '8',
                                    '--max-wait-us', '2000000', '--no-warmup', log=log) as (url, _):
            async def leave_early():
                async with httpx.AsyncClient(base_url=url, timeout=60) as client:
                    for _ in range(3):
                        with pytest.raises(TimeoutError):
                            await asyncio.wait_for(client.post('/product/batched', json={'spikes': [1, 2]}), 0.3)

            asyncio.run(leave_early())
            with httpx.Client(base_url=url, timeout=60) as client:
                net = {k: (np.asarray(v) if isinstance(v, list) else v)
                       for k, v in client.get('/network').json().items()}
                checker = loadgen.Checker(net)
                path, body = checker.good_request(random.Random(2), '/product/batched', None)
                r = client.post(path, json=body)
                assert r.status_code == 200, r.text
                assert checker.correct(path, body, r.json())
                # The server notices a departed client on its next poll: wait for the count, not for a time.
                deadline = time.monotonic() + 30
                while (cancelled := client.get('/health').json()['cancelled']) < 3 and time.monotonic() < deadline:
                    time.sleep(0.05)
                assert cancelled == 3
