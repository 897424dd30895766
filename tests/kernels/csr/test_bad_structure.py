"""Bad CSR structure: refused when concrete, dropped alike by every backend when traced.

A concrete call raises ``ValueError`` before any kernel; under ``jit`` (or
with ``validate=False``) every backend drops the same entries and never
reads or writes out of bounds.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.csr.csrmv import _csrmv
from tests.kernels.conftest import backends_of
from tests.kernels.reference_semantics import csr_product

# A column index far out of range, a row whose indptr range runs backwards, an indptr past the end.
BAD = {
    'column': (np.array([0, 1000, 1], np.int32), np.array([0, 2, 3], np.int32), r'indices\[1\] = 1000 is outside'),
    'indptr': (np.array([0, 1, 1], np.int32), np.array([0, 3, 1], np.int32), 'indptr must never decrease'),
    'past_end': (np.array([0, 1, 1], np.int32), np.array([0, 2, 500], np.int32), r'indptr\[-1\] = 500 is past'),
}
OPS = {
    'csrmv': (ej.csrmv, lambda rows: np.ones(rows, np.float32), False),
    'csrmm': (ej.csrmm, lambda rows: np.ones((rows, 2), np.float32), False),
    'binary_csrmv': (ej.binary_csrmv, lambda rows: np.ones(rows, bool), True),
    'binary_csrmm': (ej.binary_csrmm, lambda rows: np.ones((rows, 2), bool), True),
}


@pytest.mark.parametrize('transpose', [False, True])
@pytest.mark.parametrize('bad', sorted(BAD))
@pytest.mark.parametrize('op', sorted(OPS))
class TestBadStructure:
    def test_a_concrete_call_raises_the_same_error_on_every_backend(self, op, bad, transpose):
        fn, operand, _ = OPS[op]
        indices, indptr, message = BAD[bad]
        for backend in backends_of(_csrmv.primitive):
            with pytest.raises(ValueError, match=message):
                fn(jnp.ones(3), indices, indptr, operand(2), shape=(2, 2), transpose=transpose, backend=backend)

    def test_a_traced_call_drops_the_bad_entries_on_every_backend(self, op, bad, transpose):
        fn, operand, binary = OPS[op]
        indices, indptr, _ = BAD[bad]
        data = np.array([1.0, 2.0, 4.0], np.float32)
        want = csr_product(data, indices, indptr, operand(2), (2, 2), transpose, binary)
        for backend in backends_of(_csrmv.primitive):
            f = jax.jit(lambda d, i, p, x, b=backend: fn(d, i, p, x, shape=(2, 2), transpose=transpose, backend=b))
            np.testing.assert_allclose(f(data, indices, indptr, operand(2)), want)
