"""The in-package benchmark harness."""

import importlib.util
import io

import numpy as np

from eventjax import benchmarks
from eventjax.benchmarks.runner import Progress


def test_every_exported_case_builds_a_problem_whose_call_matches_its_dense_baseline():
    for case in benchmarks.CASES:
        if not case.available():
            continue
        problem = case.build(60, np.random.default_rng(0))
        got = problem.call(*problem.args, backend='jax')
        if problem.baseline == 'CSR':
            # Not the same matrix: a stored one of the same statistics, in the operator's shape and dtype.
            want = problem.dense(*problem.dense_args, backend='jax')
            assert (got.shape, got.dtype) == (want.shape, want.dtype), case.operator
            assert problem.dense_args[0].size == 60 * problem.conn_per_row
            continue
        want = problem.dense(*problem.dense_args)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4, err_msg=case.operator)


def test_the_jitc_family_is_timed_against_csr_with_the_memory_each_call_holds(tmp_path):
    results = benchmarks.run(['jitc'], backends=['jax'], sizes=[200], quick=True, progress=None)
    assert {r.operator for r in results} == {'binary_jitcmv T', 'binary_jitcmv', 'jitcmv'}
    for r in results:
        assert r.baseline == 'CSR' and r.dense_us > 0 and r.conn_per_row == 100
        # The CSR call holds its 20,000 stored entries (data and indices: 160 kB); the JITC call a few vectors.
        assert r.baseline_mb > 0.15 > 0.03 > r.memory_mb
    table = benchmarks.format_table(results)
    assert 'base us' in table and 'CSR' in table
    if importlib.util.find_spec('matplotlib') is not None:  # the plot extra; test_cli covers its absence
        benchmarks.plot(results, tmp_path / 'jitc.png')
        assert (tmp_path / 'jitc.png').stat().st_size > 1000


def test_the_jitc_family_alone_defaults_to_sizes_up_to_a_million():
    assert benchmarks.cases.default_sizes(['jitc'], (1, 2)) == (10_000, 100_000, 1_000_000)
    assert benchmarks.cases.default_sizes(['csr', 'jitc'], (1, 2)) == (1, 2)


def test_a_family_that_is_not_installed_is_skipped_with_a_note(monkeypatch):
    notes = []
    fake = benchmarks.Case('fcn', 'nothing', 'no_such_function', lambda n, rng: None)
    monkeypatch.setattr(benchmarks.runner, 'cases_for', lambda families: [fake])
    assert benchmarks.run(['fcn'], progress=None, notes=notes) == []
    assert 'not available' in notes[0]


def test_progress_writes_one_line_per_tenth_to_a_file():
    stream = io.StringIO()
    bar = Progress(20, stream)
    for i in range(20):
        bar.step(f'step {i}')
    assert stream.getvalue().count('\n') == 10
    assert '20/20' in stream.getvalue()
