"""The TPU delivery benchmark runs anywhere: a tiny run on the CPU times every update and checks it."""

import json

import pytest

from benchmarks import tpu_delivery


@pytest.mark.long  # every update twice, compiled for the CPU; the dense pass's run below is the quick check
def test_a_tiny_run_times_every_update(tmp_path, capsys):
    out = tmp_path / 'rows.json'
    tpu_delivery.main(['--sizes', '64', '--k', '4', '--ring', '3', '--loop', '2', '--backends', 'jax', 'jax',
                       '--out', str(out)])
    rows = json.loads(out.read_text())
    assert {r['op'] for r in rows} == {'csr_delay_deliver', 'csr_delay_deliver_layout', 'dense_on_pre', 'fcn_on_pre',
                                       'csr_on_pre', 'dense_on_post', 'csr2csc_on_post'}
    assert all(r['loop_us'] > 0 and r['max_abs_diff'] == 0 for r in rows)
    assert len(capsys.readouterr().out.splitlines()) == len(rows)


def test_the_dense_pass_times_dense_on_post_alone(capsys):
    tpu_delivery.main(['--sizes', '40', '--k', '4', '--loop', '2', '--backends', 'jax', 'dense-pass',
                       '--ops', 'dense_on_post', 'csr_on_pre'])
    rows = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    assert [(r['op'], r['backend']) for r in rows] == [('dense_on_post', 'jax'), ('dense_on_post', 'dense-pass'),
                                                       ('csr_on_pre', 'jax')]
    assert all(r['max_abs_diff'] == 0 for r in rows)
