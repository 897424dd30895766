"""binary_csrmv on every backend: values, batching and autodiff against a dense NumPy reference."""

from eventjax.kernels.csr.binary_csrmv import _binary_csrmv, binary_csrmv
from tests.kernels.csr.suite import BinaryCsrSuite


class TestBinaryCsrmv(BinaryCsrSuite):
    fn = staticmethod(binary_csrmv)
    prim = _binary_csrmv.primitive
    matrix = False
    mm_name = 'binary_csrmm'
