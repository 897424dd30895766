"""binary_csrmm on every backend: values, batching and autodiff against a dense NumPy reference."""

from eventjax.kernels.csr.binary_csrmm import _binary_csrmm, binary_csrmm
from tests.kernels.csr.suite import BinaryCsrSuite


class TestBinaryCsrmm(BinaryCsrSuite):
    fn = staticmethod(binary_csrmm)
    prim = _binary_csrmm.primitive
    matrix = True
    mm_name = 'binary_csrmm'
