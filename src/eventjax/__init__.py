"""eventjax: custom JAX primitives with per-platform backends, and event-driven kernels."""

from eventjax import config, errors
from eventjax.backends import XLACustomKernel, backends_available, numba_threads
from eventjax.config import clear_backends, get_backend, set_backend
from eventjax.connectivity import random_csr, random_fixed_num_conn
from eventjax.containers import CSR, EventArray, FixedNumConn
from eventjax.kernels.csr import binary_csrmm, binary_csrmv, csrmm, csrmv
from eventjax.kernels.dense import binary_densemm, binary_densemv
from eventjax.kernels.fixed_conn import binary_fcnmm, binary_fcnmv, fcnmm, fcnmv
from eventjax.primitive import defjvp, general_batching_rule, primitives

__version__ = '0.1.0'

# The numba thread count belongs to the numba bridge (compiled handlers read
# it at each launch); eventjax.config keeps its public names for it. The
# config layer may not import a bridge, so they are bound here, where the
# layers are put together.
config.set_numba_num_threads = numba_threads.set_num_threads
config.get_numba_num_threads = numba_threads.requested_num_threads

__all__ = [
    'CSR',
    'EventArray',
    'FixedNumConn',
    'XLACustomKernel',
    'backends_available',
    'binary_csrmm',
    'binary_csrmv',
    'binary_densemm',
    'binary_densemv',
    'binary_fcnmm',
    'binary_fcnmv',
    'clear_backends',
    'config',
    'csrmm',
    'csrmv',
    'defjvp',
    'errors',
    'fcnmm',
    'fcnmv',
    'general_batching_rule',
    'get_backend',
    'primitives',
    'random_csr',
    'random_fixed_num_conn',
    'set_backend',
]
