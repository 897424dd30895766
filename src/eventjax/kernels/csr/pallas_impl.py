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

from eventjax.kernels.common.pallas.rows import ROWS_TPU_UNSUPPORTED, row_product_kernels

__all__ = ['TPU_UNSUPPORTED', 'binary_csrmm_kernel', 'binary_csrmv_kernel', 'csrmm_kernel', 'csrmv_kernel']

TPU_UNSUPPORTED = ROWS_TPU_UNSUPPORTED


# Each serves mv and mm; transposed, a binary one visits only event rows.
csrmv_kernel, binary_csrmv_kernel = row_product_kernels(fixed_rows=False)
csrmm_kernel = csrmv_kernel
binary_csrmm_kernel = binary_csrmv_kernel
