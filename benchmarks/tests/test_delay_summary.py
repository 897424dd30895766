"""The delay family's summary: each backend's delivery against its undelayed product, numba against brainevent,
and one met/missed line per target, ending with the count."""

import stat

from benchmarks.delay_summary import brainevent_delay_elsewhere, delay_findings
from benchmarks.report import Result


def result(backend, n, us, base, operator='csr_delay_deliver (d 1-20, scan step)'):
    return Result('delay', operator, backend, n, 100, us, base, baseline='binary_csrmv T')


def test_each_target_is_met_or_missed_by_its_ratio_and_the_count_closes_the_summary():
    results = [result('numba', 4000, 30.0, 25.0), result('jax', 4000, 90.0, 30.0),
               result('numba', 100_000, 4000.0, 800.0)]
    elsewhere = [{'version': '0.3.0', 'n': 100_000, 'backend': 'numba', 'us': 5000.0},
                 {'version': '0.3.0', 'n': 100_000, 'backend': 'jax_raw', 'us': 90000.0}]
    lines = delay_findings(results, elsewhere)
    assert lines[0] == '  n=4000 csr_delay_deliver: delivery / undelayed: jax 3.00x, numba 1.20x'
    assert 'numba / brainevent 0.3.0 numba (5000.0 us): 0.80x' in lines[1]
    assert '  n=4000 csr_delay_deliver jax: delivery <= 1.5x the undelayed product: missed (3.00x)' in lines
    assert '  n=4000 csr_delay_deliver numba: delivery <= 1.5x the undelayed product: met (1.20x)' in lines
    assert "  n=100000 csr_delay_deliver numba <= 0.5x brainevent 0.3.0's fastest cpu backend: missed (0.80x)" in lines
    assert lines[-1] == 'targets met: 1 of 4'


def test_the_layout_row_is_held_to_the_same_targets_beside_the_raw_operator():
    layout = 'DelayedCSR.deliver (layout, d 1-20, scan step)'
    results = [result('numba', 4000, 50.0, 25.0), result('numba', 4000, 30.0, 25.0, layout),
               result('warp', 4000, 60.0, 30.0, layout)]
    elsewhere = [{'version': '0.3.0', 'n': 4000, 'backend': 'numba', 'us': 100.0}]
    lines = delay_findings(results, elsewhere)
    assert lines[:2] == ['  n=4000 csr_delay_deliver: delivery / undelayed: numba 2.00x; numba / brainevent 0.3.0 '
                         'numba (100.0 us): 0.50x',
                         '  n=4000 DelayedCSR.deliver: delivery / undelayed: numba 1.20x, warp 2.00x; numba / '
                         'brainevent 0.3.0 numba (100.0 us): 0.30x']
    assert '  n=4000 csr_delay_deliver numba: delivery <= 1.5x the undelayed product: missed (2.00x)' in lines
    assert '  n=4000 DelayedCSR.deliver numba: delivery <= 1.5x the undelayed product: met (1.20x)' in lines
    assert '  n=4000 DelayedCSR.deliver warp: delivery <= 1.5x the undelayed product: missed (2.00x)' in lines
    assert lines[-1] == 'targets met: 3 of 5'


def test_brainevent_json_lines_are_read_from_the_other_interpreter_and_a_missing_one_costs_a_note(tmp_path):
    fake = tmp_path / 'python'
    fake.write_text('#!/bin/sh\necho "compiling..."\n'
                    'echo \'{"version": "0.3.0", "n": 4000, "backend": "numba", "us": 12.5}\'\n')
    fake.chmod(fake.stat().st_mode | stat.S_IEXEC)
    rows, why = brainevent_delay_elsewhere(str(fake), [4000], timeout_s=10)
    assert why is None and rows == [{'version': '0.3.0', 'n': 4000, 'backend': 'numba', 'us': 12.5}]
    rows, why = brainevent_delay_elsewhere('/no/such/python', [4000], timeout_s=10)
    assert rows == [] and 'did not run' in why
