"""fcnmv on every backend: values, batching, autodiff and bad indices against a dense NumPy reference."""

from eventjax.kernels.fcn.fcnmv import _fcnmv, fcnmv
from tests.kernels.fcn.suite import FcnSuite


class TestFcnmv(FcnSuite):
    fn = staticmethod(fcnmv)
    prim = _fcnmv.primitive
    events = False
    matrix = False
    mm_name = 'fcnmm'
