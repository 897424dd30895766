"""The TPU delivery benchmark runs anywhere: a tiny run on the CPU times every update and checks it."""

import json

from benchmarks import tpu_delivery


def test_a_tiny_run_times_every_update(tmp_path, capsys):
    out = tmp_path / 'rows.json'
    tpu_delivery.main(['--sizes', '64', '--k', '4', '--ring', '3', '--loop', '2', '--backends', 'jax', 'jax',
                       '--out', str(out)])
    rows = json.loads(out.read_text())
    assert {r['op'] for r in rows} == {'csr_delay_deliver', 'csr_delay_deliver_layout', 'dense_on_pre', 'fcn_on_pre',
                                       'csr_on_pre'}
    assert all(r['loop_us'] > 0 and r['max_abs_diff'] == 0 for r in rows)
    assert len(capsys.readouterr().out.splitlines()) == len(rows)
