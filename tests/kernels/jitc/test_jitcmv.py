"""jitcmv on every backend: values, batching and autodiff against the dense NumPy JITC matrix."""

from eventjax.kernels.jitc.jitcmv import _jitcmv, jitcmv
from tests.kernels.jitc.suite import FloatJitcSuite


class TestJitcmv(FloatJitcSuite):
    fn = staticmethod(jitcmv)
    prim = _jitcmv.primitive
    events = False
    matrix = False
    mm_name = 'jitcmm'
