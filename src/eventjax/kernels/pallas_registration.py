"""Pallas kernels of the standard operators, as one table, and the call that registers them.

``KERNELS`` maps each operator to ``(gpu generator, tpu generator or None,
reason there is no tpu kernel)``. :func:`register_pallas_kernels` registers
them on the operators' primitives (never as a default backend); with
``eventjax.config.set_pallas_cpu_interpret(True)`` set *before* the call,
the gpu kernels also run on the cpu in interpret mode.
"""

from __future__ import annotations

from eventjax.kernels.csr import pallas_impl as csr_pallas
from eventjax.kernels.csr.binary_csrmm import _binary_csrmm
from eventjax.kernels.csr.binary_csrmv import _binary_csrmv
from eventjax.kernels.csr.csrmm import _csrmm
from eventjax.kernels.csr.csrmv import _csrmv
from eventjax.kernels.dense import pallas_impl as dense_pallas
from eventjax.kernels.dense.binary_densemm import _binary_densemm
from eventjax.kernels.dense.binary_densemv import _binary_densemv
from eventjax.kernels.fixed_conn import pallas_impl as fcn_pallas
from eventjax.kernels.fixed_conn.binary_fcnmm import _binary_fcnmm
from eventjax.kernels.fixed_conn.binary_fcnmv import _binary_fcnmv
from eventjax.kernels.fixed_conn.fcnmm import _fcnmm
from eventjax.kernels.fixed_conn.fcnmv import _fcnmv

__all__ = ['KERNELS', 'register_pallas_kernels']

KERNELS = {
    'binary_densemv': (dense_pallas.binary_densemv_kernel, dense_pallas.binary_densemv_tpu_kernel, None),
    'binary_densemm': (dense_pallas.binary_densemm_kernel, dense_pallas.binary_densemm_tpu_kernel, None),
    'csrmv': (csr_pallas.csrmv_kernel, None, csr_pallas.TPU_UNSUPPORTED),
    'csrmm': (csr_pallas.csrmm_kernel, None, csr_pallas.TPU_UNSUPPORTED),
    'binary_csrmv': (csr_pallas.binary_csrmv_kernel, None, csr_pallas.TPU_UNSUPPORTED),
    'binary_csrmm': (csr_pallas.binary_csrmm_kernel, None, csr_pallas.TPU_UNSUPPORTED),
    'fcnmv': (fcn_pallas.fcnmv_kernel, None, fcn_pallas.TPU_UNSUPPORTED),
    'fcnmm': (fcn_pallas.fcnmm_kernel, None, fcn_pallas.TPU_UNSUPPORTED),
    'binary_fcnmv': (fcn_pallas.binary_fcnmv_kernel, None, fcn_pallas.TPU_UNSUPPORTED),
    'binary_fcnmm': (fcn_pallas.binary_fcnmm_kernel, None, fcn_pallas.TPU_UNSUPPORTED),
}

_OPERATORS = {
    'binary_densemv': _binary_densemv, 'binary_densemm': _binary_densemm,
    'csrmv': _csrmv, 'csrmm': _csrmm, 'binary_csrmv': _binary_csrmv, 'binary_csrmm': _binary_csrmm,
    'fcnmv': _fcnmv, 'fcnmm': _fcnmm, 'binary_fcnmv': _binary_fcnmv, 'binary_fcnmm': _binary_fcnmm,
}


def register_pallas_kernels() -> None:
    """Register every operator's pallas kernels (gpu, and tpu where there is one).

    Registering again replaces the same entries, so calling it twice is harmless.

    Example:
        >>> from eventjax.kernels.pallas_registration import register_pallas_kernels
        >>> register_pallas_kernels()
    """
    for name, (gpu_kg, tpu_kg, _reason) in KERNELS.items():
        prim = _OPERATORS[name].primitive
        if tpu_kg is not None:
            prim.def_pallas_kernel('tpu', tpu_kg)
        # gpu last: with cpu interpret on, the cpu entry is the gpu (Triton) kernel.
        prim.def_pallas_kernel('gpu', gpu_kg)
