"""The primitive machinery: ``XLACustomKernel``, batching and JVP helpers."""

from eventjax.primitive.autodiff import defjvp, defjvp_by_name
from eventjax.primitive.batching import general_batching_rule
from eventjax.primitive.kernel import XLACustomKernel, primitives

__all__ = ['XLACustomKernel', 'defjvp', 'defjvp_by_name', 'general_batching_rule', 'primitives']
