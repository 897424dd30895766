"""binary_csrmv on every backend: values, batching and autodiff against a dense NumPy reference."""

import pytest

from eventjax.kernels.csr.binary_csrmv import _binary_csrmv, binary_csrmv
from tests.kernels.csr.suite import BinaryCsrSuite


class TestBinaryCsrmv(BinaryCsrSuite):
    fn = staticmethod(binary_csrmv)
    prim = _binary_csrmv.primitive
    matrix = False
    mm_name = 'binary_csrmm'


def test_the_serial_numba_scatter_only_sees_matrices_below_the_prefetching_size():
    # The serial transposed kernel has no prefetching path: scatter_kernel hands it only matrices that store
    # fewer entries than the split over threads needs, which must stay below where prefetching starts.
    pytest.importorskip('numba')
    from eventjax.kernels.common.numba.events import PREFETCH_MIN_ENTRIES
    from eventjax.kernels.common.numba.scatter import SCATTER_PARALLEL_MIN_ENTRIES

    assert SCATTER_PARALLEL_MIN_ENTRIES <= PREFETCH_MIN_ENTRIES
