"""The primitive machinery: ``KernelPrimitive``, resolution, batching and JVP helpers.

The public primitive class is :class:`eventjax.XLACustomKernel`, which adds
the backend bridges to :class:`KernelPrimitive`.
"""

from eventjax.primitive.autodiff import defjvp, defjvp_by_name
from eventjax.primitive.batching import general_batching_rule
from eventjax.primitive.kernel import KernelPrimitive, primitives
from eventjax.primitive.params import split_params

__all__ = ['KernelPrimitive', 'defjvp', 'defjvp_by_name', 'general_batching_rule', 'primitives', 'split_params']
