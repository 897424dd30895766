"""C++ kernels (the ``cpp`` backend, cpu) for the FCN operators; the source is ``fcn_product.cc``.

One handler serves fcnmv, fcnmm, binary_fcnmv and binary_fcnmm: ``x`` a
vector or a matrix, float products or events. ``transpose=False`` gathers
row by row; ``transpose=True`` scatters from the rows of ``x``, and the
binary products visit only the rows with an event, so they cost events x
``k``. A connection index outside ``[0, n)`` is dropped in the kernel.
"""

from __future__ import annotations

from eventjax.kernels.common.native.sources import product_kernel

__all__ = ['binary_fcnmm_kernel', 'binary_fcnmv_kernel', 'fcnmm_kernel', 'fcnmv_kernel']

fcnmv_kernel = fcnmm_kernel = product_kernel(__file__, 'fcn_product.cc', binary=False)
binary_fcnmv_kernel = binary_fcnmm_kernel = product_kernel(__file__, 'fcn_product.cc', binary=True)
