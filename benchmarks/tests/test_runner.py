"""The in-package benchmark harness."""

import importlib.util
import io
import time

import numpy as np
import pytest

import benchmarks
from benchmarks import Machine, anchors, cases
from benchmarks.runner import Progress
from benchmarks.timing import interleaved_us

MACHINE = Machine(2.0, 64, 5.0, 2, None)


def test_every_exported_case_builds_a_problem_whose_call_matches_its_dense_baseline():
    for case in benchmarks.CASES:
        if not case.available():
            continue
        problem = case.build(60, np.random.default_rng(0))
        got = problem.call(*problem.args, backend='jax')
        if problem.baseline == 'binary_csrmv T':
            # A delivery from a zero ring, summed over the ring's steps, is the undelayed event product.
            want = problem.dense(*problem.dense_args, backend='jax')
            np.testing.assert_allclose(got.sum(axis=0), want, rtol=1e-5, atol=1e-5, err_msg=case.operator)
            continue
        if problem.baseline == 'jnp gather':
            # Per-synapse values: the same values from jax.numpy (timed on each backend's row).
            want = problem.dense(*problem.dense_args, backend='jax')
            np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-6, atol=1e-6, err_msg=case.operator)
            assert got.size == 60 * problem.conn_per_row
            continue
        if problem.baseline == 'CSR':
            # Not the same matrix: a stored one of the same statistics, in the operator's shape and dtype.
            want = problem.dense(*problem.dense_args, backend='jax')
            assert (got.shape, got.dtype) == (want.shape, want.dtype), case.operator
            assert problem.dense_args[0].size == 60 * problem.conn_per_row
            continue
        want = problem.dense(*problem.dense_args)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-4, atol=1e-4, err_msg=case.operator)
        # The scipy anchor is the float product of the very same matrix.
        import scipy.sparse
        assert anchors.same_result(anchors.scipy_fn(problem.scipy, scipy.sparse)(), want), case.operator
        assert problem.floor_bytes > 0 and problem.conn_per_row == 60


def test_brainevent_computes_what_eventjax_computes_on_every_case_it_has():
    be = pytest.importorskip('brainevent', reason="brainevent is in the compare extra: pip install 'eventjax[compare]'")
    for case in benchmarks.CASES:
        problem = case.build(60, np.random.default_rng(1))
        if problem.brainevent is None:
            continue
        be_backend = anchors.brainevent_backend(problem.brainevent, 'jax', 'cpu', be)
        fn, args = anchors.brainevent_fn(problem.brainevent, be_backend, be)
        got = problem.call(*problem.args, backend='jax')
        assert anchors.same_result(fn(*args), got), case.operator


def test_the_sparse_problem_follows_the_issue_100_connections_per_row_and_2_percent_events():
    problem = next(c for c in benchmarks.CASES if c.operator == 'binary_csrmv T').build(3000, np.random.default_rng(0))
    data, indices, indptr, events = problem.args
    assert problem.conn_per_row == 100 and data.shape == (300_000,) and data.dtype == np.float32
    rows = np.asarray(indices).reshape(3000, 100)
    assert (np.diff(rows, axis=1) > 0).all()  # distinct and sorted in every row
    assert 0.01 < float(np.mean(np.asarray(events))) < 0.03


def test_a_chosen_event_rate_reaches_every_event_case_and_is_noted():
    for case in benchmarks.CASES:
        if case.family == 'events':
            continue  # each of its cases has its own rate, in its label: the family compares rates
        problem = case.build(2000, np.random.default_rng(0), rate=0.005)
        x = np.asarray(problem.args[-1])
        if x.dtype == np.bool_:
            assert 0.002 < float(np.mean(x)) < 0.01, case.operator
    notes = []
    results = benchmarks.run(['dense'], backends=['jax'], sizes=[64], quick=True, progress=None, machine=MACHINE,
                             compare=False, notes=notes, rate=0.5)
    assert results and 'events: 50.00% of the neurons per product (not the default rate).' in notes


@pytest.mark.parametrize('rate', [0.0, 1.5, -0.1])
def test_a_rate_outside_0_to_1_is_refused_before_anything_runs(rate):
    with pytest.raises(ValueError, match=r'rate must be a fraction of the neurons in \(0, 1\]'):
        benchmarks.run(['dense'], backends=['jax'], sizes=[64], progress=None, machine=MACHINE, rate=rate)


def test_the_floor_column_is_the_cases_bytes_over_the_measured_bandwidth():
    results = benchmarks.run(['fcn'], backends=['jax'], sizes=[64], quick=True, progress=None, machine=MACHINE,
                             compare=False)
    for r in results:
        assert r.floor_us == pytest.approx(r.floor_bytes / 2.0e9 * 1e6)
        assert r.x_floor == pytest.approx(r.median_us / r.floor_us)


def test_the_dense_family_skips_a_size_too_big_to_store_with_a_note():
    notes = []
    results = benchmarks.run(['dense'], backends=['jax'], sizes=[100_000], progress=None, notes=notes,
                             machine=MACHINE, compare=False)
    assert results == []
    skipped = [n for n in notes if 'skipped' in n]
    assert len(skipped) == 3 and all('40.0 GB' in n and 'n = 20,000' in n for n in skipped)


def test_a_sparse_family_above_the_dense_limit_keeps_its_problem_but_has_no_dense_baseline(monkeypatch):
    monkeypatch.setattr(cases, 'DENSE_MAX_N', 50)
    problem = next(c for c in benchmarks.CASES if c.operator == 'binary_fcnmv').build(64, np.random.default_rng(0))
    assert problem.dense is None and problem.dense_args == () and problem.floor_bytes > 0


def test_interleaved_timing_alternates_blocks_each_opened_by_an_untimed_call():
    order = []
    a_us, b_us = interleaved_us([lambda: order.append('a'), lambda: order.append('b')], min_calls=4, max_calls=4,
                                block=2, settle_s=0)
    assert ''.join(order) == 'aaabbbaaabbb'  # per round and function: one untimed call, then a block of two
    assert a_us > 0 and b_us > 0


def test_each_block_is_opened_by_untimed_calls_for_the_settling_time():
    stamps = []
    interleaved_us([lambda: stamps.append(time.perf_counter())], min_calls=1, max_calls=1, block=1, settle_s=0.02)
    # Untimed calls fill 20 ms, then the one timed call.
    assert len(stamps) > 2 and stamps[-1] - stamps[0] >= 0.019


def test_the_jitc_family_is_timed_against_csr_with_the_memory_each_call_holds(tmp_path):
    results = benchmarks.run(['jitc'], backends=['jax'], sizes=[200], quick=True, progress=None, machine=MACHINE)
    assert {r.operator for r in results} == {'binary_jitcmv T', 'binary_jitcmv', 'jitcmv'}
    for r in results:
        assert r.baseline == 'CSR' and r.dense_us > 0 and r.conn_per_row == 100
        assert r.floor_us is None and r.brainevent_us is None  # generated, not read; no brainevent counterpart
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
