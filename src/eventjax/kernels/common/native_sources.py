"""The C++ and CUDA sources of the standard event kernels, as ``NativeKernel`` specs.

The sources sit beside each family's Python modules (``<op>.cc`` for the
``cpp`` backend, ``<op>.cu`` for ``cuda``) and share ``native/event_kernels.h``.
Each handler takes every operand as an ``ffi::AnyBuffer`` and dispatches on
the dtypes at run time, so one library per source serves every dtype
combination: one build, cached on disk, whatever the calls.
"""

from __future__ import annotations

import os

import numpy as np

from eventjax.backends.native_bridge import NativeKernel

__all__ = ['HEADER_DIR', 'event_product']

HEADER_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'native')
_HEADERS = (os.path.join(HEADER_DIR, 'event_kernels.h'),)


def event_product(family_file: str, op: str, suffix: str, *, shape, transpose) -> NativeKernel:
    """The spec of the handler ``eventjax_<op>`` in ``<op><suffix>`` beside ``family_file``.

    Example:
        >>> from eventjax.kernels.csr import cpp_impl
        >>> event_product(cpp_impl.__file__, 'binary_csrmv', '.cc', shape=(2, 3), transpose=False).entry
        'eventjax_binary_csrmv'
    """
    m, n = shape
    return NativeKernel(f'eventjax_{op}', file=os.path.join(os.path.dirname(os.path.abspath(family_file)), op + suffix),
                        includes=(HEADER_DIR,), depends=_HEADERS,
                        attributes={'m': np.int64(m), 'n': np.int64(n), 'transpose': bool(transpose)})
