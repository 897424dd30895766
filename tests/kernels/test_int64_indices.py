"""int64 indices past int32 (``jax_enable_x64``, traced) are dropped on every backend, never wrapped onto a column.

warp's ``int`` is 32 bits, so ``2**33`` read as ``int`` would become column
0; the jax and numba kernels drop it, as the Semantics page says of every
index outside ``[0, n)``.
"""

import jax
import numpy as np
import pytest

import eventjax as ej

DATA, INDPTR = np.array([1., 2., 3., 4.]), np.array([0, 2, 3, 4])
FAR = np.array([2 ** 33, 2, 1, 0])  # entry 0 (row 0) points far past the columns


def _products(backend):
    """Each operator with int64 indices, traced, and the value it must give (the far entry dropped)."""
    ones = np.ones(3)
    return {
        'csrmv': (lambda i: ej.csrmv(DATA, i, INDPTR, ones, shape=(3, 3), transpose=True, backend=backend),
                  [4., 3., 2.]),
        'fcnmv': (lambda i: ej.fcnmv(DATA.reshape(2, 2), i.reshape(2, 2), np.ones(2), shape=(2, 3), transpose=True,
                                     backend=backend), [4., 3., 2.]),
        'binary_csrmv_indexed': (lambda i: ej.binary_csrmv_indexed(DATA, i, INDPTR, None, (np.array([0, 2]), 2),
                                                                   shape=(3, 3), transpose=True, backend=backend),
                                 [4., 0., 2.]),
        'csr_delay_deliver': (lambda i: ej.csr_delay_deliver(np.zeros((2, 3)), np.ones(3, bool), DATA, i, INDPTR, 1, 0,
                                                             shape=(3, 3), backend=backend)[1], [4., 3., 2.]),
        'csrmv_dt2t': (lambda i: ej.csrmv_dt2t(ones, DATA, i, INDPTR, shape=(3, 3), transpose=True, backend=backend),
                       [0., 2., 3., 4.]),
        'csr_sddmm': (lambda i: ej.csr_sddmm(np.ones((3, 1)), np.ones((1, 3)), i, INDPTR, shape=(3, 3),
                                             backend=backend), [0., 1., 1., 1.]),
        'csr_on_pre': (lambda i: ej.csr_on_pre(DATA, i, INDPTR, np.ones(3, bool), ones, shape=(3, 3),
                                               backend=backend), [1., 3., 4., 5.]),
        'fcn_on_pre': (lambda i: ej.fcn_on_pre(DATA.reshape(2, 2), i.reshape(2, 2), np.ones(2, bool), ones,
                                               shape=(2, 3), backend=backend).reshape(-1), [1., 3., 4., 5.]),
    }


@pytest.mark.parametrize('backend', ['jax', 'numba', 'warp'])
@pytest.mark.parametrize('op', sorted(_products('jax')))
def test_an_int64_index_past_int32_is_dropped_not_wrapped(backend, op):
    with jax.enable_x64(True):
        f, want = _products(backend)[op]
        np.testing.assert_allclose(jax.jit(f)(FAR), want)
