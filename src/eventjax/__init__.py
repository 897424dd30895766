"""eventjax: custom JAX primitives with per-platform backends, and event-driven kernels."""

from eventjax import config, errors
from eventjax.backends import XLACustomKernel, backends_available
from eventjax.config import clear_backends, get_backend, set_backend
from eventjax.connectivity import random_csr, random_fixed_num_conn
from eventjax.containers import CSR, EventArray, FixedNumConn
from eventjax.jitc_matrix import JITCMatrix
from eventjax.kernels.csr import binary_csrmm, binary_csrmv, csrmm, csrmv
from eventjax.kernels.dense import binary_densemm, binary_densemv
from eventjax.kernels.fixed_conn import binary_fcnmm, binary_fcnmv, fcnmm, fcnmv
from eventjax.kernels.jitc import binary_jitcmm, binary_jitcmv, jitcmm, jitcmv
from eventjax.primitive import defjvp, general_batching_rule, primitives

__version__ = '0.1.0'

__all__ = [
    'CSR',
    'EventArray',
    'FixedNumConn',
    'JITCMatrix',
    'XLACustomKernel',
    'backends_available',
    'binary_csrmm',
    'binary_csrmv',
    'binary_densemm',
    'binary_densemv',
    'binary_fcnmm',
    'binary_fcnmv',
    'binary_jitcmm',
    'binary_jitcmv',
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
    'jitcmm',
    'jitcmv',
    'primitives',
    'random_csr',
    'random_fixed_num_conn',
    'set_backend',
]
