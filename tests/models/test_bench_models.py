"""``make bench-models``' table: what was run, and nothing of a part that was skipped."""

import argparse

import jax
import pytest

from examples import bench_models

PD14_ROW = {'simulator': 'eventjax numba', 'synapses': 10, 'construction_s': 1.0, 'rtf': 2.0, 'peak_rss_gb': 0.5,
            'rates': [1.0] * 8}
NEST_ROW = dict(PD14_ROW, simulator='NEST 3.10.0', construction_s=4.0, rtf=8.0, peak_rss_gb=2.0)
CUBA_ROWS = [('cuba', 'NEST, 1 thread', {'s_per_model_s': 1.0, 'rate_e': 4.0, 'rate_i': 4.1}),
             ('cuba', 'eventjax numba', {'s_per_model_s': 0.1, 'rate_e': 4.0, 'rate_i': 4.2})]


def args():
    return argparse.Namespace(scale=1.0, k_scale=1.0, t_sim=1000.0, t_presim=500.0, drive='dc', threads=4,
                              brette_t_sim=1000.0)


def test_a_skipped_part_leaves_no_heading_and_no_empty_table():
    pd14_only = bench_models.table(args(), [('NEST', NEST_ROW), ('numba', PD14_ROW)], [], '0.1')
    assert 'Brette' not in pd14_only
    assert '| eventjax numba (0.25x, RTF 0.250x, RSS 0.25x NEST) | 10 | 1.0 | 2.00 | 0.50 |' in pd14_only
    brette_only = bench_models.table(args(), [], CUBA_ROWS, '0.1')
    assert 'PD14' not in brette_only
    assert '| CUBA | eventjax numba | 0.100 | 0.100 | 4.00, 4.20 |' in brette_only


def test_both_parts_come_one_after_the_other():
    both = bench_models.table(args(), [('NEST', NEST_ROW)], CUBA_ROWS, '0.1')
    assert both.index('PD14') < both.index('Brette') and '\n\nBrette' in both


def test_a_tpu_row_names_its_device_and_a_failed_one_its_error():
    tpu = bench_models.on_tpu(dict(PD14_ROW, simulator='eventjax jax'), 'TPU v5 lite')
    failed = bench_models.on_tpu({'error': ["error: argument --backend: invalid choice: 'pallas'"]}, 'TPU v5 lite')
    text = bench_models.table(args(), [('NEST', NEST_ROW), ('jax on TPU v5 lite', tpu),
                                       ('pallas on TPU v5 lite', failed)], [], '0.1')
    assert 'on the CPU unless a row names its device' in text
    assert '| eventjax jax on TPU v5 lite (0.25x, RTF 0.250x, RSS 0.25x NEST) | 10 |' in text
    assert '| pallas on TPU v5 lite | failed: ["error: argument --backend: invalid choice: \'pallas\'"]' in text


@pytest.mark.skipif(jax.default_backend() == 'tpu', reason='this process holds the TPU: the probe cannot open it')
def test_no_tpu_is_found_on_a_machine_without_one():
    assert bench_models.find_tpu() is None
