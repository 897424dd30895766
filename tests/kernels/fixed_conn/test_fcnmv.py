"""fcnmv on every backend: values, batching, autodiff and bad indices against a dense NumPy reference."""

from eventjax.kernels.fixed_conn.fcnmv import _fcnmv, fcnmv
from tests.kernels.fixed_conn.suite import FcnSuite


class TestFcnmv(FcnSuite):
    fn = staticmethod(fcnmv)
    prim = _fcnmv.primitive
    events = False
    matrix = False
    mm_name = 'fcnmm'
