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

from eventjax.kernels.common.pallas.rows import row_product_call

__all__ = ['TPU_UNSUPPORTED', 'binary_fcnmm_kernel', 'binary_fcnmv_kernel', 'fcnmm_kernel', 'fcnmv_kernel']

TPU_UNSUPPORTED = (
    'FCN products read x at data-dependent columns and, transposed, add into data-dependent '
    'outputs; Mosaic (TPU) has neither vector gathers from VMEM nor atomics. '
    "Use backend='jax' on tpu (XLA gather/scatter).")


def fcnmv_kernel(*, shape, transpose, outs):
    """``A @ v`` (``v @ A`` when ``transpose``); also serves ``fcnmm``."""
    return row_product_call(shape=shape, transpose=transpose, events=False, out=outs[0], fixed_rows=True)


def binary_fcnmv_kernel(*, shape, transpose, outs):
    """``A @ s`` (``s @ A``) with events; transposed, only event rows are visited."""
    return row_product_call(shape=shape, transpose=transpose, events=True, out=outs[0], fixed_rows=True)


fcnmm_kernel = fcnmv_kernel
binary_fcnmm_kernel = binary_fcnmv_kernel
