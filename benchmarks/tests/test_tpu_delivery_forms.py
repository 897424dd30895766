"""The forms benchmark runs anywhere: a tiny run on the CPU times XLA's forms and checks each against ``jax``."""

import json

import pytest

from benchmarks import tpu_delivery_forms


def _run(tmp_path, *args):
    """The rows of a tiny run (32 rows of synapses into 300 targets, 5 spiking) with ``args``."""
    out = tmp_path / 'rows.json'
    tpu_delivery_forms.main(['--rows', '32', '--n', '300', '--ring', '6', '--spikes', '5', '--repeats', '1', *args,
                             '--out', str(out)])
    return json.loads(out.read_text())


def test_a_tiny_run_times_the_xla_forms_and_checks_them(tmp_path):
    out = tmp_path / 'rows.json'
    tpu_delivery_forms.main(['--rows', '32', '--n', '300', '384', '--k', '40', '--ring', '6', '--spikes', '5',
                             '--loop', '2', '--repeats', '1', '--forms', 'jax', 'xla', 'sort',
                             '--out', str(out)])
    rows = json.loads(out.read_text())
    assert [(r['n'], r['form']) for r in rows] == [(n, f) for n in (300, 384)
                                                   for f in ('jax', 'xla', 'sort')]
    assert all(r['loop_us'] > 0 for r in rows)
    # the forms that add the pairs give the jax kernel's ring; 'sort' only sorts them
    assert all(r['max_abs_diff'] < 1e-6 for r in rows if r['form'] != 'sort')
    assert all(r['max_abs_diff'] > 1e-3 for r in rows if r['form'] == 'sort')


def test_an_unknown_form_is_reported_by_name():
    with pytest.raises(ValueError, match="unknown form 'scatterr'"):
        tpu_delivery_forms.step_of('scatterr', 4, 10, 3)


def test_the_read_forms_sum_the_same_inputs_with_and_without_a_ring(tmp_path):
    rows = _run(tmp_path, '--k', '40', '--loop', '3', '--forms', 'read-jax', 'pull-2-4', 'pull-1-2-8')
    assert [r['form'] for r in rows] == ['read-jax', 'pull-2-4', 'pull-1-2-8']
    # the inputs read from the jax kernel's ring, and summed at read time (another order: float32 rounding)
    assert all(r['max_abs_diff'] < 1e-6 for r in rows)


def test_the_kernel_forms_listed_by_windows_and_by_tiles_give_the_jax_ring(tmp_path):
    """The sorted-target kernel in Pallas's TPU interpreter, its rows read through windows and as whole tiles."""
    rows = _run(tmp_path, '--k', '64', '--loop', '2', '--forms', 'jax', 'kernel-parts-128-8-4', 'tiles-parts-128-8-2')
    assert [r['form'] for r in rows] == ['jax', 'kernel-parts-128-8-4', 'tiles-parts-128-8-2']
    assert all(r['max_abs_diff'] < 1e-3 for r in rows[1:])  # sums of weights ~100 in another order
