"""CUDA kernels (the ``cuda`` backend, gpu) for the CSR operators; the source is ``csr_product.cu``.

One handler serves csrmv, csrmm, binary_csrmv and binary_csrmm, on XLA's
stream: one thread per row; ``transpose=True`` adds with atomics into a
float32/64 scratch buffer (float16 sums in float32), and in the binary
products a thread whose row has no event returns at once. ``indptr`` is
repaired in JAX before the call; a column outside ``[0, n)`` is dropped.
"""

from __future__ import annotations

from eventjax.kernels.common.native.sources import product_kernel

__all__ = ['binary_csrmm_kernel', 'binary_csrmv_kernel', 'csrmm_kernel', 'csrmv_kernel']

csrmv_kernel = csrmm_kernel = product_kernel(__file__, 'csr_product.cu', binary=False)
binary_csrmv_kernel = binary_csrmm_kernel = product_kernel(__file__, 'csr_product.cu', binary=True)
