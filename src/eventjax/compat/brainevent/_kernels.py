"""brainevent's kernel-author names on eventjax: numba kernels as JAX functions, warp types, C++/CUDA sources.

eventjax builds these on its own machinery: :func:`numba_kernel` declares an
:class:`eventjax.XLACustomKernel` with the kernel as its numba kernel, the
``load_*`` functions build through eventjax's content-keyed native cache.
"""

from __future__ import annotations

import itertools
import os
import pathlib

import numpy as np

import eventjax as ej
from eventjax.config import cache

__all__ = ['clear_cache', 'get_cache_dir', 'jaxinfo_to_warpinfo', 'jaxtype_to_warptype', 'load_cpp_file',
           'load_cpp_inline', 'load_cuda_dir', 'load_cuda_file', 'load_cuda_inline', 'numba_cuda_kernel',
           'numba_kernel', 'print_diagnostics']

load_cpp_inline, load_cuda_inline, load_cuda_file = ej.load_cpp_inline, ej.load_cuda_inline, ej.load_cuda_file
numba_cuda_kernel = ej.numba_cuda_kernel
_serial = itertools.count()


def numba_kernel(kernel, outs, *, vmap_method: str | None = None, input_output_aliases: dict | None = None):
    """brainevent's ``numba_kernel``: a JAX function running the ``@numba.njit`` ``kernel(*ins, *outs)`` on cpu.

    The kernel runs as an eventjax numba kernel (a typed XLA FFI handler);
    ``vmap_method`` is accepted and ignored (eventjax batches by looping).

    Example:
        >>> import jax, numba, jax.numpy as jnp
        >>> @numba.njit
        ... def add(x, y, out):
        ...     for i in range(out.size):
        ...         out[i] = x[i] + y[i]
        >>> f = numba_kernel(add, outs=jax.ShapeDtypeStruct((3,), jnp.float32))
        >>> f(jnp.ones(3), jnp.ones(3))  # doctest: +SKIP
        Array([2., 2., 2.], dtype=float32)
    """
    single = not isinstance(outs, (list, tuple))
    p = ej.XLACustomKernel(f'brainevent_numba_kernel_{getattr(kernel, "__name__", "kernel")}_{next(_serial)}')
    p.def_numba_kernel(lambda **_: kernel)

    def call(*ins):
        out = p(*ins, outs=[outs] if single else list(outs), input_output_aliases=input_output_aliases)
        return out[0] if single else out

    return call


def jaxtype_to_warptype(dtype):
    """The warp scalar type of a NumPy/JAX dtype (``float32`` -> ``warp.float32``); needs warp."""
    import warp

    name = np.dtype(dtype).name
    if not hasattr(warp, name):
        raise TypeError(f'jaxtype_to_warptype(): warp has no type for dtype {name}.')
    return getattr(warp, name)


def jaxinfo_to_warpinfo(jax_info):
    """The warp array type (dtype and rank) of a ``jax.ShapeDtypeStruct``; needs warp."""
    import warp

    return warp.array(dtype=jaxtype_to_warptype(jax_info.dtype), ndim=len(jax_info.shape))


def load_cpp_file(filepath, functions=None, *, name: str | None = None, **kwargs):
    """brainevent's ``load_cpp_file``: :func:`eventjax.load_cpp_inline` of the file's source."""
    path = pathlib.Path(filepath)
    return ej.load_cpp_inline(name or path.stem, path.read_text(), functions, **kwargs)


def load_cuda_dir(directory, functions=None, *, name: str | None = None, file_patterns=None, **kwargs):
    """brainevent's ``load_cuda_dir``: :func:`eventjax.load_cuda_inline` of the directory's ``*.cu`` sources."""
    root = pathlib.Path(directory)
    files = sorted(f for pattern in (file_patterns or ['*.cu']) for f in root.glob(pattern))
    if not files:
        raise FileNotFoundError(f'load_cuda_dir(): no {file_patterns or ["*.cu"]} files in {os.fspath(root)!r}.')
    return ej.load_cuda_inline(name or root.name, [f.read_text() for f in files], functions, **kwargs)


def print_diagnostics() -> None:
    """Print which eventjax backends can run here (brainevent's toolchain report)."""
    print(ej.backends_available())


def get_cache_dir() -> str:
    """eventjax's folder of compiled C++/CUDA kernels (``$EVENTJAX_CACHE_DIR/native_kernels`` when set)."""
    return cache.native_dir()


def clear_cache(name: str | None = None) -> int:
    """Delete eventjax's compiled kernels (only the C++/CUDA libraries whose file name holds ``name``, if given).

    Returns the number of files removed; the next call compiles again.
    """
    if name is None:
        return sum(folder.files for folder in cache.clear_cache())
    root = pathlib.Path(cache.native_dir())
    doomed = [f for f in root.rglob(f'*{name}*') if f.is_file()] if root.is_dir() else []
    for f in doomed:
        f.unlink(missing_ok=True)
    return len(doomed)
