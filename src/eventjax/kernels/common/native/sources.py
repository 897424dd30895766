"""The C++ and CUDA sources of the standard kernels, as ``NativeKernel`` generators.

The sources sit beside each family's Python modules (``<family>_product.cc``
for the ``cpp`` backend, ``.cu`` for ``cuda``) and share
``native/event_kernels.h``. One handler per source serves the float and the
binary products, mv and mm, both directions; it takes every operand as an
``ffi::AnyBuffer`` and dispatches on the dtypes at run time. Each build
compiles one (weights, indices, operand) dtype combination, the one a call
has (``NativeKernel.dtype_macros``): a few seconds of the compiler on first
use, cached on disk, where all 72 combinations took over a minute per source.
"""

from __future__ import annotations

import os
from collections.abc import Callable

import numpy as np

from eventjax.backends.native import NativeKernel

__all__ = ['HEADER_DIR', 'product_kernel']

HEADER_DIR = os.path.dirname(os.path.abspath(__file__))
_HEADERS = (os.path.join(HEADER_DIR, 'event_kernels.h'),)


def product_kernel(family_file: str, source: str, *, binary: bool) -> Callable[..., NativeKernel]:
    """The kernel generator of the handler in ``source`` (beside ``family_file``) for one kind of product.

    The handler is ``eventjax_<stem>`` (``csr_product.cc`` -> ``eventjax_csr_product``).

    Example:
        >>> from eventjax.kernels.csr import cpp_impl
        >>> kg = product_kernel(cpp_impl.__file__, 'csr_product.cc', binary=True)
        >>> kg(shape=(2, 3), transpose=False, outs=None).entry
        'eventjax_csr_product'
    """
    path = os.path.join(os.path.dirname(os.path.abspath(family_file)), source)
    entry = 'eventjax_' + os.path.splitext(source)[0]
    # The C++ row sums carry `omp simd` reductions: this flag vectorises them (no OpenMP runtime, no threads).
    flags = ('-fopenmp-simd',) if source.endswith('.cc') else ()

    def kernel_generator(*, shape, transpose, outs) -> NativeKernel:
        m, n = shape
        return NativeKernel(entry, file=path, includes=(HEADER_DIR,), depends=_HEADERS, flags=flags,
                            attributes={'m': np.int64(m), 'n': np.int64(n), 'transpose': bool(transpose),
                                        'binary': bool(binary)},
                            dtype_macros={'EJ_WEIGHT': 0, 'EJ_INDEX': 1, 'EJ_OPERAND': -1})

    return kernel_generator
