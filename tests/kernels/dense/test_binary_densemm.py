"""binary_densemm on every backend: values, batching and autodiff against a dense NumPy reference."""

from eventjax.kernels.dense.binary_densemm import _binary_densemm, binary_densemm
from tests.kernels.dense.suite import DenseSuite


class TestBinaryDensemm(DenseSuite):
    fn = staticmethod(binary_densemm)
    prim = _binary_densemm.primitive
    matrix = True
    mm_name = 'binary_densemm'
