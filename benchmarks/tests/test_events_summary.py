"""The events family's findings line compares each form with its interleaved bool baseline and numba with brainevent."""

from benchmarks.events_summary import brainevent_elsewhere, events_findings
from benchmarks.report import Result


def result(operator, backend, us, base=None, be=None):
    return Result('events', operator, backend, 100_000, 100, us, base, baseline='CSR' if base else 'dense jnp',
                  brainevent_backend='numba' if be else None, brainevent_us=be)


def test_a_form_is_compared_with_its_interleaved_bool_time_and_numba_with_the_fastest_brainevent():
    results = [result('bool binary_csrmv T 0.1%', 'numba', 100.0, be=300.0),
               result('index-list binary_csrmv_indexed T 0.1%', 'numba', 40.0, base=120.0, be=300.0)]
    elsewhere = [{'version': '0.3.0', 'n': 100_000, 'rate': 0.001, 'backend': 'numba', 'us': 200.0},
                 {'version': '0.3.0', 'n': 100_000, 'rate': 0.001, 'backend': 'jax_raw', 'us': 900.0}]
    (line,) = events_findings(results, elsewhere, installed='0.2.1')
    assert 'index-list/bool numba 0.33x' in line
    assert ('brainevent 0.2.1 fastest cpu: bool 0.33x (numba 300.0 us), index-list 0.13x (numba 300.0 us)'
            in line)
    assert ('brainevent 0.3.0 fastest cpu: bool 0.50x (numba 200.0 us), index-list 0.20x (numba 200.0 us)'
            in line)


def test_each_form_is_compared_with_brainevent_timed_in_its_own_blocks():
    results = [result('bool binary_csrmv T 2.0%', 'numba', 100.0, be=400.0),
               result('index-list binary_csrmv_indexed T 2.0%', 'numba', 60.0, base=100.0, be=100.0)]
    (line,) = events_findings(results, installed='0.2.1')
    assert 'bool 0.25x (numba 400.0 us), index-list 0.60x (numba 100.0 us)' in line


def test_a_missing_interpreter_costs_a_note_not_the_run():
    rows, why = brainevent_elsewhere('/no/such/python', [100], [0.02], timeout_s=10)
    assert rows == [] and 'did not run' in why


def test_the_three_event_forms_of_the_bench_compute_the_same_product():
    import numpy as np

    import benchmarks

    for rate in (0.02, 0.001):
        got = {}
        for case in benchmarks.CASES:
            if case.family == 'events' and case.operator.endswith(f'{rate:.1%}'):
                problem = case.build(300, np.random.default_rng(0))
                got[case.operator.split()[0]] = np.asarray(problem.call(*problem.args, backend='jax'))
        assert sorted(got) == ['bit-packed', 'bool', 'index-list']
        np.testing.assert_allclose(got['index-list'], got['bool'], rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got['bit-packed'], got['bool'], rtol=1e-5, atol=1e-5)


def test_the_targets_say_met_or_missed_with_the_figures_behind_them():
    from benchmarks.events_summary import events_targets

    results = [result('bool binary_csrmv T 0.1%', 'numba', 100.0, be=300.0),
               result('index-list binary_csrmv_indexed T 0.1%', 'numba', 40.0, base=120.0, be=300.0),
               result('index-list binary_csrmv_indexed T 0.1%', 'jax', 90.0, base=120.0)]
    speed, versus = events_targets(results, installed='0.2.1')
    assert speed.startswith('MISSED: index list >= 2x faster than bool, 0.1% events, n=100,000')
    assert 'jax 1.33x' in speed and 'numba 3.00x' in speed
    assert versus.startswith("met: numba <= 0.5x brainevent's fastest cpu backend")
    elsewhere = [{'version': '0.3.0', 'n': 100_000, 'rate': 0.001, 'backend': 'numba', 'us': 150.0}]
    _, versus = events_targets(results, elsewhere, installed='0.2.1')
    assert versus.startswith('MISSED') and 'n=100,000 0.1% bool vs 0.3.0 0.67x' in versus
    assert 'index-list vs 0.3.0' not in versus  # 0.27x: within the goal


def test_targets_without_measurements_say_so():
    from benchmarks.events_summary import events_targets

    assert all(line.startswith('not measured') for line in events_targets([]))
