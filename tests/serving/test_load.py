"""The serving example under a short real load: a server subprocess, HTTP clients, NumPy-checked answers."""

import asyncio
import pathlib
import sys
import time

import pytest

pytest.importorskip('fastapi', reason="the 'serve' extra is not installed (make setup installs it)")
pytest.importorskip('httpx', reason="the 'loadtest' extra is not installed (make setup installs it)")

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / 'docs' / 'examples' / 'serving'))
import loadgen  # noqa: E402

CLIENTS = [1, 2, 4, 8, 32]


@pytest.fixture(scope='module')
def load_result(tmp_path_factory):
    log = (tmp_path_factory.mktemp('server') / 'server.log').open('w')
    start = time.monotonic()
    with loadgen.running_server('--neurons', '200', '--backends', 'numba', '--max-batch', '8', log=log) as (url, _):
        result = asyncio.run(loadgen.run_load(url, CLIENTS, seconds=1.0, backends=[None, 'numba'], flips=2))
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
