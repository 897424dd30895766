"""The ``cpp`` and ``cuda`` backends: C++ and CUDA kernels built with the system's toolchains, through XLA FFI.

The names kernel authors import: :class:`NativeKernel` (a kernel's source,
entry and launch), :func:`ffi_type` and :func:`c_type` (a dtype's XLA FFI
and C names), and the torch-style loaders :func:`load_cpp_inline`,
:func:`load_cuda_inline`, :func:`load_cuda_file`. The builder
(:func:`cpp_toolchain`, :func:`build_library`, :func:`load_symbol`,
:func:`cuda_arch`) is here for the other bridges that build C++ (numba_cuda's
launcher). The modules ``bridge``, ``build`` and ``modules`` are the
machinery and private.

Example:
    >>> from eventjax.backends.native import c_type, ffi_type
    >>> ffi_type('float32'), c_type('float32')
    ('F32', 'float')
"""

from eventjax.backends.native.bridge import CPP_BRIDGE, CUDA_BRIDGE, NativeKernel, c_type, cuda_arch, ffi_type
from eventjax.backends.native.build import build_library, cpp_toolchain, load_symbol
from eventjax.backends.native.modules import load_cpp_inline, load_cuda_file, load_cuda_inline

__all__ = ['CPP_BRIDGE', 'CUDA_BRIDGE', 'NativeKernel', 'build_library', 'c_type', 'cpp_toolchain', 'cuda_arch',
           'ffi_type', 'load_cpp_inline', 'load_cuda_file', 'load_cuda_inline', 'load_symbol']
