"""eventjax: custom JAX primitives with per-platform backends, and event-driven kernels."""

from eventjax import config, errors
from eventjax.backends import XLACustomKernel, backends_available
from eventjax.config import clear_backends, get_backend, set_backend
from eventjax.containers import CSR, EventArray
from eventjax.kernels.csr import binary_csrmm, binary_csrmv, csrmm, csrmv
from eventjax.kernels.dense import binary_densemm, binary_densemv
from eventjax.primitive import defjvp, general_batching_rule, primitives

__version__ = '0.1.0'

__all__ = [
    'CSR',
    'EventArray',
    'XLACustomKernel',
    'backends_available',
    'binary_csrmm',
    'binary_csrmv',
    'binary_densemm',
    'binary_densemv',
    'clear_backends',
    'config',
    'csrmm',
    'csrmv',
    'defjvp',
    'errors',
    'general_batching_rule',
    'get_backend',
    'primitives',
    'set_backend',
]
