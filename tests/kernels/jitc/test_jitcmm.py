"""jitcmm on every backend: values, batching and autodiff against the dense NumPy JITC matrix."""

from eventjax.kernels.jitc.jitcmm import _jitcmm, jitcmm
from tests.kernels.jitc.suite import FloatJitcSuite


class TestJitcmm(FloatJitcSuite):
    fn = staticmethod(jitcmm)
    prim = _jitcmm.primitive
    events = False
    matrix = True
    mm_name = 'jitcmm'
