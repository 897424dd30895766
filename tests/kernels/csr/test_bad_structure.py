"""Bad CSR structure in concrete data never reads or writes out of bounds.

numba kernels report it as an exception; warp and jax kernels skip (warp) or
clamp/drop (jax) the bad entries, and ``CSR.validate()`` names the problem.
"""

import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from tests.kernels.conftest import PLATFORM

# A column index far out of range, and a row whose indptr range runs backwards.
BAD = {
    'column': (jnp.array([0, 1000, 1], jnp.int32), jnp.array([0, 2, 3], jnp.int32), 'column index 1000'),
    'indptr': (jnp.array([0, 1, 1], jnp.int32), jnp.array([0, 3, 1], jnp.int32), 'indptr must be non-decreasing'),
    'past_end': (jnp.array([0, 1, 1], jnp.int32), jnp.array([0, 2, 500], jnp.int32), 'indptr must be'),
}
OPS = {
    'csrmv': (ej.csrmv, lambda rows: jnp.ones(rows)),
    'csrmm': (ej.csrmm, lambda rows: jnp.ones((rows, 2))),
    'binary_csrmv': (ej.binary_csrmv, lambda rows: jnp.ones(rows, bool)),
    'binary_csrmm': (ej.binary_csrmm, lambda rows: jnp.ones((rows, 2), bool)),
}


@pytest.mark.parametrize('transpose', [False, True])
@pytest.mark.parametrize('bad', sorted(BAD))
@pytest.mark.parametrize('op', sorted(OPS))
class TestBadStructure:
    @pytest.mark.skipif(PLATFORM != 'cpu', reason='numba runs on the cpu')
    def test_numba_reports_an_error(self, op, bad, transpose):
        fn, operand = OPS[op]
        indices, indptr, message = BAD[bad]
        with pytest.raises(Exception, match=message):
            np.asarray(fn(jnp.ones(3), indices, indptr, operand(2), shape=(2, 2), transpose=transpose,
                          backend='numba'))

    @pytest.mark.parametrize('backend', ['jax', 'warp'])
    def test_other_backends_stay_in_bounds(self, op, bad, transpose, backend):
        fn, operand = OPS[op]
        indices, indptr, _ = BAD[bad]
        out = fn(jnp.ones(3), indices, indptr, operand(2), shape=(2, 2), transpose=transpose, backend=backend)
        assert np.all(np.isfinite(np.asarray(out)))
