"""csrmm on every backend: values, batching and autodiff against a dense NumPy reference."""

from eventjax.kernels.csr.csrmm import _csrmm_p, csrmm
from tests.kernels.csr.suite import CsrSuite


class TestCsrmm(CsrSuite):
    fn = staticmethod(csrmm)
    prim = _csrmm_p
    events = False
    matrix = True
    mm_name = 'csrmm'
