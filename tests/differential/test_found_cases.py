"""Problems the long differential run found, kept as fixed cases so the default run checks them every time."""

import numpy as np

from tests.differential import per_synapse, plasticity


def test_a_csc_product_read_by_column_drops_the_entries_of_no_valid_row():
    # Unvalidated CSC structure, transpose=True: entries with a negative row give 0 (and 0 gradients).
    problem = {
        'name': 'cscmv_dt2t', 'indices': np.array([-2, -1, 0, 0, -1, -1], np.int32),
        'indptr': np.array([0, 0, 1, 1, 2, 2, 3, 5, 6, 2], np.int32), 'shape': (1, 9), 'broken': True,
        'dtype': 'float16', 'transpose': True,
        'y': np.array([[0.25, -1.5, np.inf, 0.75, 0.5, 0., 1., 0.75, 1.25],
                       [1.75, -0.25, -2., -0.5, -1., 0.25, -2., 1.25, -0.25]], np.float16),
        'w': np.array([[-1., -1.25, 0.5, 2., -2., 0.5], [-0.25, -1., 1.75, -1.75, -0.5, -0.5]], np.float16)}
    assert not per_synapse.check(problem)


def test_pallas_updates_a_column_view_with_no_valid_entry():
    # Every stored entry is dropped by the repair: the pallas kernel must leave the weights alone, not fail.
    problem = {
        'name': 'csr2csc_on_post', 'apply': None, 'm': 5, 'n': 1, 'bounds': (-0.1, 0.3), 'broken': True,
        'indices': np.array([-1], np.int32), 'indptr': np.array([0, 3, 1, 1, 1, 1], np.int32),
        'weight': np.array([-0.29859325], np.float32),
        'pre': np.array([0.65878683, 0.8626998, 0.31972724, 0.15976784, 0.61124396], np.float32),
        'post': np.array([True]), 'pre_trace': np.array([-0.2761583, 0.5, 0., 1., 0.47094044], np.float32),
        'post_trace': np.array([0.], np.float32)}
    with plasticity.pallas_on_cpu():
        assert not plasticity.check(problem, ('pallas',))
