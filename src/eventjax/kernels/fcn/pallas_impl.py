"""Pallas kernels for the fixed-number-of-connections family: gpu (Triton) here, tpu (Mosaic) in ``pallas_tpu``.

Each generator ``kg(*, shape, transpose, outs)`` returns ``call(weights,
indices, x, *, interpret)``, the form :mod:`eventjax.backends.pallas`
expects. Row ``i`` owns the ``k`` entries ``indices[i, :]``; the kernels are
the CSR ones with that fixed row length (see
:mod:`eventjax.kernels.common.pallas.rows`): a gather per row for
``transpose=False``, ``atomic_add`` scatters for ``transpose=True``.
Weights are ``(m, k)`` or, homogeneous, ``(1, 1)``.
"""

from __future__ import annotations

from eventjax.kernels.common.pallas.rows import row_product_kernels
from eventjax.kernels.fcn.pallas_tpu import binary_fcnmv_tpu_kernel, fcnmv_tpu_kernel

__all__ = ['TPU_DEFAULT', 'binary_fcnmm_kernel', 'binary_fcnmm_tpu_kernel', 'binary_fcnmv_kernel',
           'binary_fcnmv_tpu_kernel', 'fcnmm_kernel', 'fcnmm_tpu_kernel', 'fcnmv_kernel', 'fcnmv_tpu_kernel']


# On one TPU v5e chip the tpu kernels beat the jax kernels in both directions: the default there.
TPU_DEFAULT = True

# Each serves mv and mm; transposed, a binary one visits only event rows.
fcnmv_kernel, binary_fcnmv_kernel = row_product_kernels(fixed_rows=True)
fcnmm_kernel = fcnmv_kernel
binary_fcnmm_kernel = binary_fcnmv_kernel
fcnmm_tpu_kernel = fcnmv_tpu_kernel
binary_fcnmm_tpu_kernel = binary_fcnmv_tpu_kernel
