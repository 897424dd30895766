"""The in-package benchmark harness."""

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
        want = problem.dense(*problem.dense_args)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4, err_msg=case.operator)


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
