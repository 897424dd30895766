"""Comparisons shared by the pallas tests: the dense NumPy reference and the other backends."""

from __future__ import annotations

import numpy as np

from tests.kernels.cases import tol

OTHER_BACKENDS = ('jax', 'numba')


def assert_matches(result, expected, dtype):
    """``result`` equals the float64 ``expected`` within the contract's tolerance; NaN where it is NaN."""
    result = np.asarray(result, np.float64)
    assert result.shape == expected.shape
    np.testing.assert_allclose(result, expected, **tol(dtype))


def assert_same_as_backends(run, result, dtype):
    """``run(backend)`` on jax and numba gives what pallas gave."""
    for backend in OTHER_BACKENDS:
        other = run(backend)
        assert other.dtype == result.dtype
        np.testing.assert_allclose(np.asarray(result, np.float64), np.asarray(other, np.float64), **tol(dtype))
