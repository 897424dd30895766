"""The ``cpp`` (cpu) and ``cuda`` (gpu) backends: kernels written as C++ or CUDA source.

A kernel generator ``kg(**static_params, outs=outs)`` returns a
:class:`NativeKernel`: the source (a string or a file) of an XLA FFI handler
defined with ``XLA_FFI_DEFINE_HANDLER_SYMBOL`` from jaxlib's headers
(``#include "xla/ffi/api/ffi.h"``), plus macro definitions, flags and
static attributes. Because the generator sees the static parameters and
``outs``, one source serves every dtype and shape it is asked for: pass
``defines={'T': c_type(outs[0].dtype)}`` or format the source.

At the first lowering of a (source, flags, ...) combination the bridge
compiles it (``native_build``; cached on disk by content, so a later process
only loads the library), loads it with ctypes, registers the handler as an
XLA FFI target and calls it with ``jax.ffi.ffi_call``: typed buffers in,
typed buffers out, no Python and no GIL on the call path. A handler that
returns ``ffi::Error`` makes the call raise an exception carrying its message.
An output the call aliases to an input (``input_output_aliases``) is that
input's buffer: the handler finds the input's values in it and writes only
what changes.

Targets are kept, with the library handles, in a registry written under a
lock and read without one; a target is named after the build's content key,
so an edited source never reuses an old target.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import attrs
import numpy as np

from eventjax.backends import bridge
from eventjax.backends.bridge import BackendStatus, Bridge
from eventjax.backends.native import build as native_build
from eventjax.backends.targets import TargetRegistry
from eventjax.errors import KernelSpecError

__all__ = ['CPP_BRIDGE', 'CUDA_BRIDGE', 'NativeKernel', 'c_type', 'compile_kernel', 'cuda_arch', 'ffi_type',
           'native_kernel_generator', 'target_count']

_FFI = {'bool': 'PRED', 'int8': 'S8', 'int16': 'S16', 'int32': 'S32', 'int64': 'S64', 'uint8': 'U8',
        'uint16': 'U16', 'uint32': 'U32', 'uint64': 'U64', 'float16': 'F16', 'bfloat16': 'BF16',
        'float32': 'F32', 'float64': 'F64', 'complex64': 'C64', 'complex128': 'C128'}
_C = {'bool': 'bool', 'int8': 'int8_t', 'int16': 'int16_t', 'int32': 'int32_t', 'int64': 'int64_t',
      'uint8': 'uint8_t', 'uint16': 'uint16_t', 'uint32': 'uint32_t', 'uint64': 'uint64_t',
      'float32': 'float', 'float64': 'double'}
_PLATFORM = {'cpp': 'cpu', 'cuda': 'CUDA'}


def ffi_type(dtype: Any) -> str:
    """The XLA FFI data type name of ``dtype``, for ``ffi::Buffer<ffi::NAME>`` in a source.

    Example:
        >>> ffi_type(np.float32)
        'F32'
    """
    name = np.dtype(dtype).name
    if name not in _FFI:
        raise KernelSpecError(f'ffi_type(): no XLA FFI data type for {name}; supported: {", ".join(_FFI)}.')
    return _FFI[name]


def c_type(dtype: Any) -> str:
    """The C++ scalar type of ``dtype`` (``float``, ``int32_t``, ...), for a macro or a template argument.

    float16 and bfloat16 have no portable C++ type: write ``ffi::NativeType<ffi::F16>`` in the source.

    Example:
        >>> c_type(np.int32)
        'int32_t'
    """
    name = np.dtype(dtype).name
    if name not in _C:
        raise KernelSpecError(f'c_type(): no portable C++ type for {name}; use '
                              f'xla::ffi::NativeType<xla::ffi::{_FFI.get(name, "...")}> in the source.')
    return _C[name]


def _strings(value: Any) -> tuple[str, ...]:
    return (value,) if isinstance(value, str) else tuple(str(v) for v in value)


def _defines(value: Mapping) -> dict[str, str]:
    return {str(k): str(v) for k, v in dict(value).items()}


@attrs.frozen
class NativeKernel:
    """What a ``cpp`` or ``cuda`` kernel generator returns: an XLA FFI handler's source and how to build it.

    Attributes:
        entry: the handler's symbol, as named in ``XLA_FFI_DEFINE_HANDLER_SYMBOL(entry, impl, binding)``.
        source: the source text (give this or ``file``).
        file: the path of a source file (its folder is on the include path).
        defines: ``-D`` macros, ``{'T': 'float'}`` (values become strings).
        flags: further compiler flags (``-O3``, ``-std=c++17`` and, for CUDA, ``-arch`` are given).
        includes: further include folders.
        depends: files the source includes (headers of your own): their content joins the
            cache key, so editing one rebuilds.
        attributes: static attributes passed to the handler (``.Attr<float>("scale")`` in the binding);
            use numpy scalars to fix their type (``np.float32(2)``).
        dtype_macros: macros set at each lowering to the XLA FFI type name of an input's dtype
            (``{'T': 0}``: ``T`` is ``F32`` when input 0 is float32, ``PRED`` when bool; -1 names
            the last input), so a source that dispatches on dtypes compiles only the combinations
            a program uses, each on first use into a library of its own (cached like any build).
        vmap_method: how ``jax.vmap`` runs the kernel (``jax.ffi.ffi_call``'s option); the
            default runs it once per batch element.

    Outputs reach the handler uninitialised: a kernel that accumulates zeroes them first.

    Example:
        >>> k = NativeKernel('scale', source='...', attributes={'scale': np.float32(2)})
        >>> k.entry
        'scale'
    """

    entry: str
    source: str = ''
    file: str = attrs.field(default='', converter=os.fspath)
    defines: Mapping[str, str] = attrs.field(factory=dict, converter=_defines)
    flags: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    includes: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    depends: tuple[str, ...] = attrs.field(default=(), converter=_strings)
    attributes: Mapping[str, Any] = attrs.field(factory=dict, converter=dict)
    vmap_method: str = 'sequential'
    dtype_macros: Mapping[str, int] = attrs.field(factory=dict, converter=dict)

    def __attrs_post_init__(self) -> None:
        if not self.entry.isidentifier():
            raise KernelSpecError(f'NativeKernel: entry must be the C symbol of the handler, got {self.entry!r}.')
        if bool(self.source) == bool(self.file):
            raise KernelSpecError('NativeKernel: give exactly one of source= (the text) and file= (a path); '
                                  f'got {"both" if self.source else "neither"}.')

    def for_inputs(self, dtypes: Sequence[Any]) -> NativeKernel:
        """This kernel with its ``dtype_macros`` defined from the inputs' ``dtypes``."""
        if not self.dtype_macros:
            return self
        for macro, index in self.dtype_macros.items():
            if not -len(dtypes) <= index < len(dtypes):
                raise KernelSpecError(f'NativeKernel {self.entry!r}: dtype_macros[{macro!r}] names input {index}, '
                                      f'but the call has {len(dtypes)} inputs.')
        named = {macro: ffi_type(dtypes[index]) for macro, index in self.dtype_macros.items()}
        return attrs.evolve(self, defines={**self.defines, **named})

    def _read(self, path: str) -> str:
        try:
            with open(path, encoding='utf-8') as f:
                return f.read()
        except OSError as e:
            raise KernelSpecError(f'NativeKernel {self.entry!r}: cannot read {path!r}: {e}.') from e

    def text(self) -> tuple[str, str, tuple[str, ...]]:
        """``(source text, the name the compiler reports, include folders)``; reads ``file`` now."""
        if not self.file:
            return self.source, f'<{self.entry}: inline source>', self.includes
        path = os.path.abspath(self.file)
        return self._read(path), path, (os.path.dirname(path), *self.includes)

    def depends_digest(self) -> str:
        """The content of the ``depends`` files, as one string for the cache key."""
        return '\0'.join(self._read(os.path.abspath(p)) for p in self.depends)


def cuda_arch() -> str:
    """The architecture CUDA kernels are built for: ``EVENTJAX_CUDA_ARCH``, else JAX's first GPU, else sm_80.

    Example:
        >>> cuda_arch().startswith('sm_')
        True
    """
    forced = os.environ.get('EVENTJAX_CUDA_ARCH', '').strip()
    if forced:
        return forced
    if bridge.jax_has_platform('gpu'):
        import jax

        capability = getattr(jax.devices('gpu')[0], 'compute_capability', '')
        if capability:
            return 'sm_' + capability.replace('.', '')
    return 'sm_80'


# --- Target registry ---------------------------------------------------------


@attrs.frozen
class _Target:
    name: str
    symbol: Any = attrs.field(eq=False)  # the ctypes function pointer XLA holds


_REGISTRY: TargetRegistry[_Target] = TargetRegistry()


def target_count() -> int:
    """How many FFI targets the ``cpp`` and ``cuda`` backends have registered in this process.

    Example:
        >>> n = target_count()
    """
    return len(_REGISTRY)


def _toolchain(backend: str) -> native_build.Toolchain:
    return native_build.cuda_toolchain() if backend == 'cuda' else native_build.cpp_toolchain()


def compile_kernel(kernel: NativeKernel, backend: str = 'cpp') -> str:
    """Build ``kernel`` for ``backend`` (``'cpp'`` or ``'cuda'``), or find it in the cache; return the library's path.

    The CUDA build needs nvcc, not a GPU.

    Raises:
        NativeBuildError: the compiler is missing or failed (its message, with the source's line numbers).

    Example:
        >>> path = compile_kernel(NativeKernel('k', source=SRC))  # doctest: +SKIP
    """
    text, origin, includes = kernel.text()
    return native_build.build_library(
        _toolchain(backend), text, origin=origin, entry=kernel.entry, arch=cuda_arch() if backend == 'cuda' else '',
        includes=includes, defines=kernel.defines, flags=kernel.flags, depends=kernel.depends_digest())


def _target_for(kernel: NativeKernel, backend: str) -> _Target:
    import jax

    text, origin, includes = kernel.text()
    tool = _toolchain(backend)
    arch = cuda_arch() if backend == 'cuda' else ''
    key = native_build.build_key(tool, text, arch=arch, includes=includes, defines=kernel.defines, flags=kernel.flags,
                                 depends=kernel.depends_digest())

    def create(index: int) -> _Target:
        path = compile_kernel(kernel, backend)
        symbol = native_build.load_symbol(path, kernel.entry, origin)
        name = f'eventjax_{backend}_{kernel.entry}_{key[:16]}'
        jax.ffi.register_ffi_target(name, jax.ffi.pycapsule(symbol), platform=_PLATFORM[backend])
        return _Target(name, symbol)

    return _REGISTRY.get_or_create((backend, kernel.entry, key), create)


def native_kernel_generator(kg: Callable, backend: str = 'cpp') -> Callable:
    """Wrap a generator of :class:`NativeKernel` into the generator the primitive machinery lowers.

    Args:
        kg: called as ``kg(**static_params, outs=outs)``; returns a :class:`NativeKernel`.
        backend: ``'cpp'`` (a C++ handler for the cpu) or ``'cuda'`` (a CUDA handler for the gpu).

    Returns:
        ``kg2(**static_params, outs=outs)`` returning a JAX-traceable ``f(*arrays) -> tuple``.

    Example:
        >>> kg2 = native_kernel_generator(lambda outs: NativeKernel('k', source=SRC))  # doctest: +SKIP
    """

    def kg2(*, outs: Any, input_output_aliases: Any = None, **static_params: Any) -> Callable:
        import jax

        outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
        kernel = kg(**static_params, outs=outs)
        if not isinstance(kernel, NativeKernel):
            raise KernelSpecError(f'{backend} backend: the kernel generator must return an '
                                  f'eventjax.NativeKernel, got {type(kernel).__name__} {kernel!r}.')
        tool = _toolchain(backend)
        if not tool.path:
            raise native_build.NativeBuildError(f'{backend} backend: {tool.reason} {tool.fix}')

        def call(*arrays: Any) -> tuple:
            target = _target_for(kernel.for_inputs([a.dtype for a in arrays]), backend)
            # An aliased output shares its input's buffer, so the handler finds the input's values there.
            ffi = jax.ffi.ffi_call(target.name, outs, vmap_method=kernel.vmap_method,
                                   input_output_aliases=dict(input_output_aliases or {}))
            return tuple(ffi(*arrays, **kernel.attributes))

        return call

    return kg2


# --- Declarations --------------------------------------------------------------


def _toolchain_status(backend: str, platform: str, runs_on: str, elsewhere: tuple[str, str],
                      toolchain: Callable) -> BackendStatus | None:
    """Why ``backend`` cannot build on ``platform``: not its platform (``elsewhere``: reason, fix), or no compiler."""
    if platform != runs_on:
        return BackendStatus(backend, platform, False, *elsewhere)
    tool = toolchain()
    return None if tool.path else BackendStatus(backend, platform, False, tool.reason, tool.fix)


def _cpp_status(platform: str) -> BackendStatus:
    unbuildable = _toolchain_status('cpp', platform, 'cpu', ('cpp kernels run on the CPU only.',
                                                             "Use backend 'cuda' (CUDA source) on gpu."),
                                    native_build.cpp_toolchain)
    # Not `or`: an unavailable status is falsy.
    return BackendStatus('cpp', platform, True) if unbuildable is None else unbuildable


def _cuda_status(platform: str) -> BackendStatus:
    unbuildable = _toolchain_status('cuda', platform, 'gpu', ('cuda kernels run on NVIDIA GPUs only.',
                                                              "Use backend 'cpp' (C++ source) on cpu."),
                                    native_build.cuda_toolchain)
    if unbuildable is not None:
        return unbuildable
    if not bridge.jax_has_platform('gpu'):
        return bridge.no_device_status('cuda', platform)
    return BackendStatus('cuda', platform, True)


def _wrap(backend: str) -> Callable[[Callable, str], Callable]:
    return lambda kg, platform: native_kernel_generator(kg, backend)


_CONTRACT = ('``kernel_generator(**static_params, outs=outs)`` returns an ``eventjax.NativeKernel``: the {lang} '
             'source (inline or a file) of an XLA FFI handler defined with ``XLA_FFI_DEFINE_HANDLER_SYMBOL`` '
             '(``#include "xla/ffi/api/ffi.h"``), compiled with {tool} at the first lowering and cached on disk '
             'by content; it runs with no Python and no GIL on the call path.')

CPP_BRIDGE = Bridge('cpp', ('cpu',), _cpp_status, _wrap('cpp'), default_platform='cpu',
                    hint="C++ kernels run on the CPU; register CUDA source with def_cuda_kernel for the gpu.",
                    contract=_CONTRACT.format(lang='C++', tool='g++ or clang++ ($CXX)'),
                    # On XLA:CPU an op before the custom call costs more than repairing the structure inside.
                    prepares_in_kernel=True)
CUDA_BRIDGE = Bridge('cuda', ('gpu',), _cuda_status, _wrap('cuda'), default_platform='gpu',
                     hint="CUDA kernels run on the gpu; register C++ source with def_cpp_kernel for the CPU.",
                     contract=_CONTRACT.format(lang='CUDA', tool='nvcc ($NVCC)') +
                     ' The handler gets XLA\'s stream with ``.Ctx<ffi::PlatformStream<cudaStream_t>>()``.')
