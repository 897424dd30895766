"""The TPU products benchmark runs anywhere: a tiny run on the CPU times every product and checks it."""

import json

import pytest

from benchmarks import tpu_products


def test_a_tiny_run_times_and_checks_every_product(tmp_path, capsys):
    out = tmp_path / 'rows.json'
    tpu_products.main(['--sizes', '64', '--k', '4', '--loop', '2', '--backends', 'jax', '--out', str(out)])
    rows = json.loads(out.read_text())
    ops = {(r['op'], r['transpose']) for r in rows}
    assert ops == {(op, t) for op in ('dense_f32', 'binary_fcnmv', 'binary_csrmv', 'binary_densemv')
                   for t in (True, False)}
    assert all(r['loop_us'] > 0 and r['call_us'] > 0 for r in rows)
    assert all(r['max_abs_diff_vs_first'] == 0 for r in rows if 'max_abs_diff_vs_first' in r)
    assert len(capsys.readouterr().out.splitlines()) == len(rows)


def test_jax_limit_leaves_out_the_jax_kernels_past_it(tmp_path):
    out = tmp_path / 'rows.json'
    tpu_products.main(['--sizes', '32', '64', '--k', '4', '--loop', '2', '--backends', 'jax', '--jax-limit', '32',
                       '--ops', 'binary_fcnmv', '--out', str(out)])
    rows = json.loads(out.read_text())
    assert {r['size'] for r in rows if r['op'] == 'binary_fcnmv'} == {32}
    assert {r['size'] for r in rows if r['op'] == 'dense_f32'} == {32, 64}


def test_csr_rows_of_unequal_length_are_timed_without_a_dense_product(tmp_path):
    out = tmp_path / 'rows.json'
    tpu_products.main(['--sizes', '64', '--k', '4', '--loop', '2', '--backends', 'jax', '--ops', 'binary_csrmv',
                       '--csr-rows', 'unequal', '--out', str(out)])
    rows = json.loads(out.read_text())
    assert {(r['op'], r['transpose'], r['csr_rows']) for r in rows} == {('binary_csrmv', t, 'unequal')
                                                                       for t in (True, False)}
    assert all(r['loop_us'] > 0 for r in rows)


def test_unequal_rows_vary_about_k_entries():
    import numpy as np

    _, indices, indptr = tpu_products._unequal_csr(np.random.default_rng(0), 1000, 500, 100)
    lengths = np.diff(np.asarray(indptr))
    assert indices.shape[0] == indptr[-1] and 95 < lengths.mean() < 105 and lengths.std() > 5


def test_a_run_stopped_midway_keeps_the_rows_it_measured(tmp_path, monkeypatch):
    """--out is written after every row: a run a time limit stops (here, at the CSR product) keeps the rest."""
    out = tmp_path / 'rows.json'
    product = tpu_products._product

    def stopping(op, *args):
        if op == 'binary_csrmv':
            raise KeyboardInterrupt
        return product(op, *args)

    monkeypatch.setattr(tpu_products, '_product', stopping)
    with pytest.raises(KeyboardInterrupt):
        tpu_products.main(['--sizes', '64', '--k', '4', '--loop', '2', '--backends', 'jax', '--ops', 'binary_fcnmv',
                           'binary_csrmv', '--out', str(out)])
    rows = json.loads(out.read_text())
    assert {r['op'] for r in rows} == {'dense_f32', 'binary_fcnmv'} and len(rows) == 4
