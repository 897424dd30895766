"""C++ kernels (the ``cpp`` backend, cpu) for the CSR operators; the source is ``binary_csrmv.cc``.

``transpose=False`` gathers row by row; ``transpose=True`` visits only the
rows of the events, so it costs events x connections per row. ``indptr``
is repaired in JAX before the call (the operator's ``prepare``), and a
column index outside ``[0, n)`` is dropped in the kernel.
"""

from __future__ import annotations

from eventjax.kernels.common.native_sources import event_product

__all__ = ['binary_csrmv_kernel']


def binary_csrmv_kernel(*, shape, transpose, outs):
    return event_product(__file__, 'binary_csrmv', '.cc', shape=shape, transpose=transpose)
