"""CUDA kernels (the ``cuda`` backend, gpu) for the FCN operators; the source is ``fcn_product.cu``.

One handler serves fcnmv, fcnmm, binary_fcnmv and binary_fcnmm, on XLA's
stream: one thread per row; ``transpose=True`` adds with atomics into a
float32/64 scratch buffer (float16 sums in float32), and in the binary
products a thread whose row has no event returns at once. A connection
index outside ``[0, n)`` is dropped.
"""

from __future__ import annotations

from eventjax.kernels.common.native.sources import product_kernel

__all__ = ['binary_fcnmm_kernel', 'binary_fcnmv_kernel', 'fcnmm_kernel', 'fcnmv_kernel']

fcnmv_kernel = fcnmm_kernel = product_kernel(__file__, 'fcn_product.cu', binary=False)
binary_fcnmv_kernel = binary_fcnmm_kernel = product_kernel(__file__, 'fcn_product.cu', binary=True)
