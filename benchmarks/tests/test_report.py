"""The results table, its ratio columns, the JSON file and the plot, from hand-made results."""

import importlib.util
import json

import pytest

import benchmarks
from benchmarks import Machine, Result


def _result(**kw):
    base = dict(family='csr', operator='binary_csrmv T', backend='numba', n=4000, conn_per_row=100, median_us=30.0,
                dense_us=60.0, floor_bytes=40_000, floor_us=10.0, brainevent_backend='numba', brainevent_us=60.0,
                scipy_us=15.0)
    return Result(**{**base, **kw})


class TestRatios:
    def test_each_ratio_is_eventjax_time_over_the_other_and_vs_dense_the_speedup(self):
        r = _result()
        assert (r.speedup, r.x_floor, r.x_brainevent, r.x_scipy) == (2.0, 3.0, 0.5, 2.0)

    def test_a_missing_anchor_gives_no_ratio(self):
        r = _result(dense_us=None, floor_us=None, brainevent_us=None, scipy_us=None)
        assert (r.speedup, r.x_floor, r.x_brainevent, r.x_scipy) == (None, None, None, None)


class TestTable:
    def test_the_row_shows_every_time_and_ratio(self):
        table = benchmarks.format_table([_result()])
        header, row = table.splitlines()
        assert header.split() == ['operator', 'backend', 'n', 'k', 'median', 'us', 'dense', 'us', 'vs', 'dense',
                                  'floor', 'us', 'x', 'floor', 'be', 'us', 'x', 'be', 'scipy', 'us', 'x', 'scipy']
        assert row.split() == ['binary_csrmv', 'T', 'numba', '4000', '100', '30.0', '60.0', '2.00x', '10.0', '3.0x',
                               '60.0', '0.50x', '15.0', '2.00x']

    def test_missing_anchors_show_a_dash(self):
        row = benchmarks.format_table([_result(brainevent_us=None, scipy_us=None)]).splitlines()[1]
        assert row.split()[-4:] == ['-', '-', '-', '-']


def test_json_holds_every_field_the_ratios_the_machine_and_the_notes(tmp_path):
    path = tmp_path / 'bench.json'
    benchmarks.write_json(path, [_result()], Machine(12.0, 128, 5.0, 2, 1.0), ['a note'])
    doc = json.loads(path.read_text())
    assert doc['machine']['bandwidth_gbs'] == 12.0 and doc['notes'] == ['a note']
    row = doc['results'][0]
    assert row['floor_bytes'] == 40_000 and row['x_floor'] == 3.0 and row['x_brainevent'] == 0.5


@pytest.mark.skipif(importlib.util.find_spec('matplotlib') is None, reason='plots need the plot extra')
def test_the_plot_draws_eventjax_brainevent_dense_scipy_and_the_floor(tmp_path, monkeypatch):
    import matplotlib.axes

    labels = []
    real = matplotlib.axes.Axes.plot
    monkeypatch.setattr(matplotlib.axes.Axes, 'plot', lambda ax, *a, **k: labels.append(k.get('label')) or
                        real(ax, *a, **k))
    results = [_result(n=n, median_us=n / 100) for n in (1000, 4000)]
    results += [_result(n=n, backend='jax', brainevent_backend='jax_raw') for n in (1000, 4000)]
    benchmarks.plot(results, tmp_path / 'p.png')
    assert labels == ['numba', 'brainevent numba', 'jax', 'brainevent jax_raw', 'dense jnp', 'scipy CSR',
                      'memory floor']
    assert (tmp_path / 'p.png').stat().st_size > 1000
