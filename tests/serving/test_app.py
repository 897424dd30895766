"""The serving example in-process: /step refuses a state that is not finite float32 with a clean 422."""

import math
import pathlib
import sys

import pytest

pytest.importorskip('fastapi', reason="the 'serve' extra is not installed (make setup installs it)")
pytest.importorskip('httpx', reason="the 'loadtest' extra is not installed (make setup installs it)")
from fastapi.testclient import TestClient  # noqa: E402

sys.path.insert(0, str(pathlib.Path(__file__).parents[2] / 'docs' / 'examples' / 'serving'))
import app as serving_app  # noqa: E402

N = 100


@pytest.fixture(scope='module')
def client():
    with TestClient(serving_app.create_app(N, backends=['jax'], warmup=False)) as c:
        yield c


def post_raw(client, body: str):
    """Post a body as written, so literal NaN and Infinity reach the server unchanged."""
    return client.post('/step', content=body, headers={'content-type': 'application/json'})


class TestStepRefusesNonFiniteState:
    @pytest.mark.parametrize('field', ['v', 'ge', 'gi'])
    @pytest.mark.parametrize('value', [1e300, -1e39])
    def test_a_value_beyond_float32_gets_a_422_naming_the_field(self, client, field, value):
        r = client.post('/step', json={'spikes': [0], field: [value] * N})
        assert r.status_code == 422, r.text
        assert f'{field}: every value must be a finite float32' in r.json()['detail']

    @pytest.mark.parametrize('literal', ['NaN', 'Infinity', '-Infinity', '1e400'])
    def test_a_literal_nan_or_infinity_gets_a_422(self, client, literal):
        r = post_raw(client, '{"spikes": [0], "ge": [' + ', '.join([literal] + ['0.0'] * (N - 1)) + ']}')
        assert r.status_code == 422, r.text
        assert r.json()['detail']

    def test_a_state_that_overflows_within_the_step_gets_a_422(self, client):
        # Each value is a float32, but ge + gi is -inf, and so is the next v.
        r = client.post('/step', json={'spikes': [0], 'ge': [-3e38] * N, 'gi': [-3e38] * N})
        assert r.status_code == 422, r.text
        assert 'leaves the float32 range' in r.json()['detail']

    def test_a_nan_in_the_spikes_gets_a_422_in_strict_json(self, client):
        r = client.post('/product', content='{"spikes": [NaN]}', headers={'content-type': 'application/json'})
        assert r.status_code == 422, r.text
        assert r.json()['detail']

    def test_a_good_state_gets_strict_json(self, client):
        r = client.post('/step', json={'spikes': [0, 1], 'ge': [1.0] * N})
        assert r.status_code == 200, r.text
        body = r.json()
        assert len(body['v']) == N and all(math.isfinite(x) for x in body['v'] + body['ge'] + body['gi'])
