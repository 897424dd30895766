"""csrmm on every backend: values, batching and autodiff against a dense NumPy reference."""

from eventjax.kernels.csr.csrmm import _csrmm, csrmm
from tests.kernels.csr.suite import CsrSuite


class TestCsrmm(CsrSuite):
    fn = staticmethod(csrmm)
    prim = _csrmm.primitive
    events = False
    matrix = True
    mm_name = 'csrmm'
