"""CUDA kernels (the ``cuda`` backend, gpu) for the FCN operators; the source is ``binary_fcnmv.cu``.

``transpose=False`` runs one thread per row; ``transpose=True`` one per row,
returning at once without an event. A connection index outside
``[0, n)`` is dropped in the kernel.
"""

from __future__ import annotations

from eventjax.kernels.common.native_sources import event_product

__all__ = ['binary_fcnmv_kernel']


def binary_fcnmv_kernel(*, shape, transpose, outs):
    return event_product(__file__, 'binary_fcnmv', '.cu', shape=shape, transpose=transpose)
