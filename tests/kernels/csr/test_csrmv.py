"""csrmv on every backend: values, batching and autodiff against a dense NumPy reference."""

from eventjax.kernels.csr.csrmv import _csrmv, csrmv
from tests.kernels.csr.suite import CsrSuite


class TestCsrmv(CsrSuite):
    fn = staticmethod(csrmv)
    prim = _csrmv.primitive
    events = False
    matrix = False
    mm_name = 'csrmm'
