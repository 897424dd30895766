"""binary_jitcmv on every backend: values, batching and autodiff against the dense NumPy JITC matrix."""

from eventjax.kernels.jitc.binary_jitcmv import _binary_jitcmv, binary_jitcmv
from tests.kernels.jitc.suite import BinaryJitcSuite


class TestBinaryJitcmv(BinaryJitcSuite):
    fn = staticmethod(binary_jitcmv)
    prim = _binary_jitcmv.primitive
    events = True
    matrix = False
    mm_name = 'binary_jitcmm'
