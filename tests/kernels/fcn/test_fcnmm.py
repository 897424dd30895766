"""fcnmm on every backend: values, batching, autodiff and bad indices against a dense NumPy reference."""

from eventjax.kernels.fcn.fcnmm import _fcnmm, fcnmm
from tests.kernels.fcn.suite import FcnSuite


class TestFcnmm(FcnSuite):
    fn = staticmethod(fcnmm)
    prim = _fcnmm.primitive
    events = False
    matrix = True
    mm_name = 'fcnmm'
