"""binary_fcnmv on every backend: values, batching, autodiff and bad indices against a dense NumPy reference."""

from eventjax.kernels.fixed_conn.binary_fcnmv import _binary_fcnmv_p, binary_fcnmv
from tests.kernels.fixed_conn.suite import FcnSuite


class TestBinaryFcnmv(FcnSuite):
    fn = staticmethod(binary_fcnmv)
    prim = _binary_fcnmv_p
    events = True
    matrix = False
    mm_name = 'binary_fcnmm'
