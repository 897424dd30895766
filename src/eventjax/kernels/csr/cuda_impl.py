"""CUDA kernels (the ``cuda`` backend, gpu) for the CSR operators; the source is ``binary_csrmv.cu``.

``transpose=False`` runs one thread per row; ``transpose=True`` one per row,
returning at once without an event (atomic adds into a float32/64 buffer). ``indptr``
is repaired in JAX before the call (the operator's ``prepare``), and a
column index outside ``[0, n)`` is dropped in the kernel.
"""

from __future__ import annotations

from eventjax.kernels.common.native_sources import event_product

__all__ = ['binary_csrmv_kernel']


def binary_csrmv_kernel(*, shape, transpose, outs):
    return event_product(__file__, 'binary_csrmv', '.cu', shape=shape, transpose=transpose)
