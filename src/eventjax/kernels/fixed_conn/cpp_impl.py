"""C++ kernels (the ``cpp`` backend, cpu) for the FCN operators; the source is ``binary_fcnmv.cc``.

``transpose=False`` gathers row by row; ``transpose=True`` visits only the
rows of the events, so it costs events x ``k``. A connection index outside
``[0, n)`` is dropped in the kernel.
"""

from __future__ import annotations

from eventjax.kernels.common.native_sources import event_product

__all__ = ['binary_fcnmv_kernel']


def binary_fcnmv_kernel(*, shape, transpose, outs):
    return event_product(__file__, 'binary_fcnmv', '.cc', shape=shape, transpose=transpose)
