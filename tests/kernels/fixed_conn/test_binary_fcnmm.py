"""binary_fcnmm on every backend: values, batching, autodiff and bad indices against a dense NumPy reference."""

from eventjax.kernels.fixed_conn.binary_fcnmm import _binary_fcnmm_p, binary_fcnmm
from tests.kernels.fixed_conn.suite import FcnSuite


class TestBinaryFcnmm(FcnSuite):
    fn = staticmethod(binary_fcnmm)
    prim = _binary_fcnmm_p
    events = True
    matrix = True
    mm_name = 'binary_fcnmm'
