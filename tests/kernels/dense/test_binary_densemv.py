"""binary_densemv on every backend: values, batching and autodiff against a dense NumPy reference."""

from eventjax.kernels.dense.binary_densemv import _binary_densemv, binary_densemv
from tests.kernels.dense.suite import DenseSuite


class TestBinaryDensemv(DenseSuite):
    fn = staticmethod(binary_densemv)
    prim = _binary_densemv.primitive
    matrix = False
    mm_name = 'binary_densemm'
