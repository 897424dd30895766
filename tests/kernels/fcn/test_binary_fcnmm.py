"""binary_fcnmm on every backend: values, batching, autodiff and bad indices against a dense NumPy reference."""

from eventjax.kernels.fcn.binary_fcnmm import _binary_fcnmm, binary_fcnmm
from tests.kernels.fcn.suite import BinaryFcnSuite


class TestBinaryFcnmm(BinaryFcnSuite):
    fn = staticmethod(binary_fcnmm)
    prim = _binary_fcnmm.primitive
    events = True
    matrix = True
    mm_name = 'binary_fcnmm'
