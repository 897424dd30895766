"""binary_jitcmm on every backend: values, batching and autodiff against the dense NumPy JITC matrix."""

from eventjax.kernels.jitc.binary_jitcmm import _binary_jitcmm, binary_jitcmm
from tests.kernels.jitc.suite import BinaryJitcSuite


class TestBinaryJitcmm(BinaryJitcSuite):
    fn = staticmethod(binary_jitcmm)
    prim = _binary_jitcmm.primitive
    events = True
    matrix = True
    mm_name = 'binary_jitcmm'
