"""Pallas kernels for the CSR family (gpu, Triton lowering).

Each generator ``kg(*, shape, transpose, outs)`` returns ``call(data,
indices, indptr, x, *, interpret)``, the form
:mod:`eventjax.backends.pallas` expects; the kernels themselves are
shared with the FCN family in :mod:`eventjax.kernels.common.pallas.rows`.

``transpose=False`` gathers row by row (one program per block of rows, a
loop over each row's entries bounded by ``indptr``). ``transpose=True``
scatters with ``atomic_add``, which only the Triton lowering has: there is
no TPU kernel for either direction (see :data:`TPU_UNSUPPORTED`).
Row ranges are taken from ``indptr`` as given; the operator repairs it
before binding.
"""

from __future__ import annotations

from eventjax.kernels.common.pallas.rows import row_product_call

__all__ = ['TPU_UNSUPPORTED', 'binary_csrmm_kernel', 'binary_csrmv_kernel', 'csrmm_kernel', 'csrmv_kernel']

TPU_UNSUPPORTED = (
    'CSR products read x at data-dependent columns (a gather per stored entry) and, transposed, '
    'add into data-dependent outputs; Mosaic (TPU) has neither vector gathers from VMEM nor atomics. '
    "Use backend='jax' on tpu (XLA gather/scatter).")


def csrmv_kernel(*, shape, transpose, outs):
    """``A @ v`` (``v @ A`` when ``transpose``); also serves ``csrmm``."""
    return row_product_call(shape=shape, transpose=transpose, events=False, out=outs[0])


def binary_csrmv_kernel(*, shape, transpose, outs):
    """``A @ s`` (``s @ A``) with events; transposed, only event rows are visited."""
    return row_product_call(shape=shape, transpose=transpose, events=True, out=outs[0])


csrmm_kernel = csrmv_kernel
binary_csrmm_kernel = binary_csrmv_kernel
