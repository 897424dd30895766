"""Pallas kernels for the CSR family: gpu (Triton) here, tpu (Mosaic) in ``pallas_tpu``.

Each generator ``kg(*, shape, transpose, outs)`` returns ``call(data,
indices, indptr, x, *, interpret)``, the form
:mod:`eventjax.backends.pallas` expects; the kernels themselves are
shared with the FCN family in :mod:`eventjax.kernels.common.pallas.rows`.

``transpose=False`` gathers row by row (one program per block of rows, a
loop over each row's entries bounded by ``indptr``). ``transpose=True``
scatters with ``atomic_add``, which only the Triton lowering has; the TPU
kernels are one-hot products on the MXU instead.
Row ranges are taken from ``indptr`` as given; the operator repairs it
before binding.
"""

from __future__ import annotations

from eventjax.kernels.common.pallas.rows import row_product_kernels
from eventjax.kernels.csr.pallas_tpu import binary_csrmv_tpu_kernel, csrmv_tpu_kernel

__all__ = ['TPU_DEFAULT', 'binary_csrmm_kernel', 'binary_csrmm_tpu_kernel', 'binary_csrmv_kernel',
           'binary_csrmv_tpu_kernel', 'csrmm_kernel', 'csrmm_tpu_kernel', 'csrmv_kernel', 'csrmv_tpu_kernel']


# On one TPU v5e chip the tpu kernels beat the jax kernels in both directions: the default there.
TPU_DEFAULT = True

# Each serves mv and mm; transposed, a binary one visits only event rows.
csrmv_kernel, binary_csrmv_kernel = row_product_kernels(fixed_rows=False)
csrmm_kernel = csrmv_kernel
binary_csrmm_kernel = binary_csrmv_kernel
csrmm_tpu_kernel = csrmv_tpu_kernel
binary_csrmm_tpu_kernel = binary_csrmv_tpu_kernel
