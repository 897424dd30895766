"""eventjax: custom JAX primitives with per-platform backends, and event-driven kernels."""

from eventjax import config, errors
from eventjax.backends import XLACustomKernel, backends_available
from eventjax.config import clear_backends, get_backend, set_backend
from eventjax.primitive import defjvp, general_batching_rule, primitives

__version__ = '0.1.0'

__all__ = [
    'XLACustomKernel',
    'backends_available',
    'clear_backends',
    'config',
    'defjvp',
    'errors',
    'general_batching_rule',
    'get_backend',
    'primitives',
    'set_backend',
]
