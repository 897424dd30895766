"""C++ kernels (the ``cpp`` backend, cpu) for the CSR operators; the source is ``csr_product.cc``.

One handler serves csrmv, csrmm, binary_csrmv and binary_csrmm: ``x`` a
vector or a matrix, float products or events. ``transpose=False`` gathers
row by row; ``transpose=True`` scatters from the rows of ``x``, and the
binary products visit only the rows with an event, so they cost events x
connections per row. ``indptr`` is repaired in the kernel as the rows are
visited (the cummax the other backends run in JAX before their call), and a
column index outside ``[0, n)`` is dropped there too.
"""

from __future__ import annotations

from eventjax.kernels.common.native.sources import product_kernel

__all__ = ['binary_csrmm_kernel', 'binary_csrmv_kernel', 'csrmm_kernel', 'csrmv_kernel']

csrmv_kernel = csrmm_kernel = product_kernel(__file__, 'csr_product.cc', binary=False)
binary_csrmv_kernel = binary_csrmm_kernel = product_kernel(__file__, 'csr_product.cc', binary=True)
