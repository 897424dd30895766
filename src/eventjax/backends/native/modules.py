"""brainevent's ``load_cpp_inline``, ``load_cuda_inline`` and ``load_cuda_file`` on the cpp/cuda build cache.

They compile a source that defines XLA FFI handlers (``XLA_FFI_DEFINE_HANDLER_SYMBOL``)
and register each named handler as the FFI target ``"<name>.<function>"``, which a
kernel generator then calls with ``jax.ffi.ffi_call`` (what brainevent's
``def_cuda_raw_kernel`` generators do). Unlike brainevent, the functions must be
written against jaxlib's FFI headers: eventjax generates no wrappers for
``BE::Tensor`` signatures. Builds share the content-keyed disk cache of the
``cpp`` and ``cuda`` backends.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping, Sequence

import attrs

from eventjax.backends.native import bridge as native_bridge
from eventjax.backends.native import build as native_build
from eventjax.errors import KernelSpecError

__all__ = ['NativeModule', 'load_cpp_inline', 'load_cuda_file', 'load_cuda_inline']

_lock = threading.Lock()
_registered: dict[str, str] = {}  # target name -> library path, written under _lock only


@attrs.frozen
class NativeModule:
    """A compiled source and the FFI targets registered from it.

    Attributes:
        name: the module name, the prefix of the target names.
        path: the shared library.
        targets: ``{function: target name}``; call ``jax.ffi.ffi_call(module.targets['f'], ...)``.
    """

    name: str
    path: str
    targets: Mapping[str, str]


def _function_names(functions) -> tuple[str, ...]:
    if isinstance(functions, str):
        return (functions,)
    if isinstance(functions, Mapping):
        raise KernelSpecError(
            'functions: give the names of XLA FFI handlers defined with XLA_FFI_DEFINE_HANDLER_SYMBOL (a list); '
            "brainevent's argument specs ({'f': ['arg', 'ret', ...]}) describe generated wrappers, which eventjax "
            'does not generate: the handler binding in the source says the same.')
    names = tuple(functions or ())
    if not names:
        raise KernelSpecError('functions: name at least one handler defined in the source.')
    return names


def _load(name: str, source: str, functions, backend: str, *, extra_cflags: Sequence[str] | None,
          extra_include_paths: Sequence[str] | None, target_prefix: str | None) -> NativeModule:
    import jax

    names = _function_names(functions)
    kernel = native_bridge.NativeKernel(names[0], source=source, flags=tuple(extra_cflags or ()),
                                        includes=tuple(extra_include_paths or ()))
    path = native_bridge.compile_kernel(kernel, backend)
    prefix = target_prefix or name
    targets = {}
    with _lock:
        for fn in names:
            target = f'{prefix}.{fn}'
            symbol = native_build.load_symbol(path, fn, f'{name}: {fn}')
            known = _registered.get(target)
            if known is None:
                jax.ffi.register_ffi_target(target, jax.ffi.pycapsule(symbol),
                                            platform='CUDA' if backend == 'cuda' else 'cpu')
                _registered[target] = path
            elif known != path:
                raise KernelSpecError(f'{name}: the FFI target {target!r} is already registered from another '
                                      f'build ({known}); XLA cannot replace it. Load the edited source under a new '
                                      'name or target_prefix.')
            targets[fn] = target
    return NativeModule(name, path, targets)


def load_cpp_inline(name: str, cpp_sources: str | Sequence[str], functions, *,
                    extra_cflags: Sequence[str] | None = None, extra_include_paths: Sequence[str] | None = None,
                    target_prefix: str | None = None) -> NativeModule:
    """Compile C++ source for the CPU and register its handlers as ``"<name>.<function>"`` (brainevent's name).

    Example:
        >>> mod = load_cpp_inline('my_ops', SRC, ['scale'])  # doctest: +SKIP
        >>> jax.ffi.ffi_call(mod.targets['scale'], out)(x)  # doctest: +SKIP
    """
    source = '\n\n'.join(cpp_sources) if not isinstance(cpp_sources, str) else cpp_sources
    return _load(name, source, functions, 'cpp', extra_cflags=extra_cflags,
                 extra_include_paths=extra_include_paths, target_prefix=target_prefix)


def load_cuda_inline(name: str, cuda_sources: str | Sequence[str], functions, *,
                     extra_cuda_cflags: Sequence[str] | None = None,
                     extra_include_paths: Sequence[str] | None = None,
                     target_prefix: str | None = None) -> NativeModule:
    """Compile CUDA source with nvcc and register its handlers for the gpu as ``"<name>.<function>"``.

    Building needs nvcc, not a GPU; running the targets needs one.

    Example:
        >>> mod = load_cuda_inline('my_ops', SRC, ['scale'])  # doctest: +SKIP
    """
    source = '\n\n'.join(cuda_sources) if not isinstance(cuda_sources, str) else cuda_sources
    return _load(name, source, functions, 'cuda', extra_cflags=extra_cuda_cflags,
                 extra_include_paths=extra_include_paths, target_prefix=target_prefix)


def load_cuda_file(filepath: str | os.PathLike, functions, *, name: str | None = None,
                   **kwargs) -> NativeModule:
    """:func:`load_cuda_inline` of a ``.cu`` file's text; ``name`` defaults to the file's stem.

    Example:
        >>> mod = load_cuda_file('kernels/scale.cu', ['scale'])  # doctest: +SKIP
    """
    path = os.fspath(filepath)
    with open(path, encoding='utf-8') as f:
        source = f.read()
    return load_cuda_inline(name or os.path.splitext(os.path.basename(path))[0], source, functions, **kwargs)
