"""Pallas kernels for the fixed-number-of-connections family (gpu, Triton lowering).

Each generator ``kg(*, shape, transpose, outs)`` returns ``call(weights,
indices, x, *, interpret)``, the form :mod:`eventjax.backends.pallas`
expects. Row ``i`` owns the ``k`` entries ``indices[i, :]``; the kernels are
the CSR ones with that fixed row length (see
:mod:`eventjax.kernels.common.pallas.rows`): a gather per row for
``transpose=False``, ``atomic_add`` scatters for ``transpose=True``.
Weights are ``(m, k)`` or, homogeneous, ``(1, 1)``.
"""

from __future__ import annotations

from eventjax.kernels.common.pallas.rows import ROWS_TPU_UNSUPPORTED, row_product_kernels

__all__ = ['TPU_UNSUPPORTED', 'binary_fcnmm_kernel', 'binary_fcnmv_kernel', 'fcnmm_kernel', 'fcnmv_kernel']

TPU_UNSUPPORTED = ROWS_TPU_UNSUPPORTED


# Each serves mv and mm; transposed, a binary one visits only event rows.
fcnmv_kernel, binary_fcnmv_kernel = row_product_kernels(fixed_rows=True)
fcnmm_kernel = fcnmv_kernel
binary_fcnmm_kernel = binary_fcnmv_kernel
