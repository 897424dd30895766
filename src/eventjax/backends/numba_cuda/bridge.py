"""The ``numba_cuda`` machinery: ``numba.cuda.jit`` kernels compiled to PTX, launched on XLA's stream.

At the first lowering of a (kernel, input/output dtypes and ranks) the
kernel is compiled to PTX by numba-cuda (no GPU needed: numba's NVVM and
NVRTC do it) for the architecture :func:`eventjax.backends.native.bridge.cuda_arch`
names; the PTX is kept on disk under :func:`eventjax.config.cache.native_dir`,
named by the kernel's fingerprint (its code, options and the values it reads,
as for numba CPU kernels), so a later process neither imports numba.cuda's
compiler nor compiles.

Every kernel runs through one XLA FFI target, ``eventjax_numba_cuda_launch``:
a C++ handler (``launch.cc``, built once with the ``cpp``
backend's compiler and cache) that loads the PTX into the context of XLA's
stream the first time it is called there, packs each buffer the way numba's
kernels take an array, and launches on that stream. The PTX is handed to the
handler at trace time under a key made from its content, which the call
carries as an attribute: an executable never names a kernel it was not traced
with. Shapes are read at run time, so new shapes never recompile.
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.metadata
import inspect
import os
import re
import threading
from collections.abc import Sequence
from typing import Any

import attrs
import jax
import numpy as np

from eventjax.backends import native
from eventjax.backends import numba as numba_backend
from eventjax.backends.targets import TargetRegistry
from eventjax.config.cache import native_dir
from eventjax.errors import KernelCompilationError, KernelSpecError, UnsupportedDtypeError

__all__ = ['TARGET', 'CompiledKernel', 'NumbaCudaCompileError', 'compile_kernel', 'launcher_call', 'launcher_path',
           'param_count']

TARGET = 'eventjax_numba_cuda_launch'
_SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'launch.cc')
_DTYPES = ('bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64', 'float16', 'float32',
           'float64', 'complex64', 'complex128')

_Spec = tuple[str, int]  # (dtype name, rank)


class NumbaCudaCompileError(KernelCompilationError):
    """numba-cuda could not compile a kernel to PTX; the message holds numba's."""


@attrs.frozen
class CompiledKernel:
    """A kernel's PTX for one signature.

    Attributes:
        ptx: the PTX text.
        entry: the kernel's (mangled) name in it.
        key: a positive 63-bit number made from the PTX and entry: the call's ``module`` attribute.
    """

    ptx: str
    entry: str
    key: int


def param_count(specs: Sequence[_Spec]) -> int:
    """How many parameters numba's kernel ABI gives arrays of these ranks (5 fields + shape + strides each).

    Example:
        >>> param_count([('float32', 1), ('float32', 2)])
        16
    """
    return sum(5 + 2 * rank for _, rank in specs)


# --- The launcher library --------------------------------------------------------

_launcher_lock = threading.Lock()
_launcher: dict[str, Any] = {}


def launcher_path() -> str:
    """Build the launcher (or find it in the cpp backend's cache); return the library's path.

    Example:
        >>> launcher_path().endswith('.so')  # doctest: +SKIP
        True
    """
    with open(_SOURCE, encoding='utf-8') as f:
        text = f.read()
    return native.build_library(native.cpp_toolchain(), text, origin=_SOURCE, entry=TARGET)


def _add_module() -> Any:
    """The launcher's ``eventjax_numba_cuda_add_module``; builds, loads and registers the target once."""
    found = _launcher.get('add')
    if found is not None:
        return found
    with _launcher_lock:
        if 'add' not in _launcher:
            path = launcher_path()
            launch = native.load_symbol(path, TARGET, _SOURCE)
            add = native.load_symbol(path, 'eventjax_numba_cuda_add_module', _SOURCE)
            add.argtypes = (ctypes.c_int64, ctypes.c_char_p, ctypes.c_char_p)
            add.restype = ctypes.c_int
            jax.ffi.register_ffi_target(TARGET, jax.ffi.pycapsule(launch), platform='CUDA')
            _launcher['launch'] = launch  # XLA holds its address: keep the library's symbol alive
            _launcher['add'] = add
    return _launcher['add']


# --- Compiling to PTX ------------------------------------------------------------


def _cc() -> tuple[int, int]:
    arch = native.cuda_arch()
    digits = re.sub(r'\D', '', arch)
    if len(digits) < 2:
        raise KernelSpecError(f'numba_cuda: cannot read a compute capability from the architecture {arch!r}; '
                              'set EVENTJAX_CUDA_ARCH to e.g. sm_80.')
    return int(digits[:-1]), int(digits[-1])


def _check_dispatcher(kernel: Any) -> None:
    options = getattr(kernel, 'targetoptions', None)
    if options is None or not hasattr(kernel, 'py_func') or type(kernel).__name__ != 'CUDADispatcher':
        raise KernelSpecError(f'numba_cuda: NumbaCudaKernel.kernel must be a @numba.cuda.jit kernel, got '
                              f'{type(kernel).__name__} {kernel!r}.')
    if options.get('device'):
        raise KernelSpecError('numba_cuda: the kernel is a device function (cuda.jit(device=True)); launch a kernel '
                              'that calls it.')
    if options.get('link') or options.get('extensions'):
        raise KernelSpecError('numba_cuda: kernels that link CUDA C/C++ files (link=) or use argument extensions '
                              "are not supported; write such a kernel for the 'cuda' backend (eventjax.NativeKernel).")


def _versions() -> str:
    def version(dist: str) -> str:
        try:
            return importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            return ''

    with open(__file__, 'rb') as f:
        own = hashlib.sha256(f.read()).hexdigest()[:16]
    return f'numba-cuda {version("numba-cuda")} numba {version("numba")} bridge {own}'


def _compile(kernel: Any, specs: Sequence[_Spec], cc: tuple[int, int]) -> tuple[str, str]:
    try:
        from numba import cuda, from_dtype, types  # noqa: PLC0415
    except ImportError as e:
        raise NumbaCudaCompileError(f'numba_cuda: numba-cuda is not installed ({e}); '
                                    "pip install 'eventjax[numba-cuda]'.") from e
    sig = tuple(types.Array(from_dtype(np.dtype(d)), r, 'C') for d, r in specs)
    options = kernel.targetoptions
    try:
        ptx, _ = cuda.compile_ptx(kernel.py_func, sig, debug=options.get('debug') or None,
                                  lineinfo=options.get('lineinfo', False), fastmath=options.get('fastmath', False),
                                  opt=options.get('opt'), cc=cc, launch_bounds=options.get('launch_bounds'))
    except Exception as e:  # numba's typing errors, a missing NVVM or NVRTC: all say what went wrong
        name = getattr(kernel.py_func, '__qualname__', repr(kernel))
        args = ', '.join(f'{d}[rank {r}]' for d, r in specs)
        raise NumbaCudaCompileError(
            f'numba_cuda: numba-cuda could not compile {name} for ({args}) (inputs, then outputs; all C-contiguous '
            f'arrays) to PTX for sm_{cc[0]}{cc[1]}. If the message names a missing libnvrtc or libnvvm, '
            f"pip install 'eventjax[numba-cuda]' brings NVRTC, and NVVM comes with the CUDA toolkit.\n"
            f'numba said: {type(e).__name__}: {e}') from e
    entries = re.findall(r'\.entry\s+([A-Za-z_$][\w$]*)\s*\(', ptx)
    if len(entries) != 1:
        raise NumbaCudaCompileError(f'numba_cuda: expected one kernel entry in the PTX of {kernel.py_func.__name__}, '
                                    f'found {len(entries)}.')
    return ptx, entries[0]


def _disk_name(fingerprint: tuple, specs: Sequence[_Spec], cc: tuple[int, int]) -> str:
    text = repr((fingerprint, tuple(specs), cc, _versions()))
    return os.path.join(native_dir(), 'numba_cuda_' + hashlib.sha256(text.encode()).hexdigest()[:32] + '.ptx')


def _write_atomically(path: str, text: str) -> None:
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = f'{path}.{os.getpid()}.{threading.get_ident()}.tmp'
    with open(tmp, 'w', encoding='utf-8') as f:
        f.write(text)
    os.replace(tmp, path)


def compile_kernel(kernel: Any, specs: Sequence[_Spec], cc: tuple[int, int] | None = None,
                   fingerprint: tuple | None = None) -> CompiledKernel:
    """Compile ``kernel`` to PTX for arrays of ``specs`` (dtype name, rank), or read it from the disk cache.

    Needs numba-cuda, not a GPU. ``fingerprint`` (the kernel's, from numba.keying) names the
    cached PTX; without one nothing is cached.

    Raises:
        NumbaCudaCompileError: numba-cuda failed (its message included).

    Example:
        >>> k = compile_kernel(add, [('float32', 1)] * 3)  # doctest: +SKIP
        >>> k.entry in k.ptx  # doctest: +SKIP
        True
    """
    _check_dispatcher(kernel)
    cc = cc or _cc()
    path = _disk_name(fingerprint, specs, cc) if fingerprint is not None else ''
    ptx = entry = ''
    if path:
        try:
            with open(path, encoding='utf-8') as f:
                entry, _, ptx = f.read().partition('\n')
        except OSError:
            ptx = entry = ''
    if not ptx or not entry:
        ptx, entry = _compile(kernel, specs, cc)
        if path:
            try:
                _write_atomically(path, f'{entry}\n{ptx}')
            except OSError:
                pass  # a read-only cache folder costs a compile next time, nothing else
    digest = hashlib.sha256(f'{entry}\0{ptx}'.encode()).digest()
    return CompiledKernel(ptx, entry, int.from_bytes(digest[:8], 'little') & ((1 << 63) - 1))


# --- Targets and calls -------------------------------------------------------------


@attrs.frozen
class _Module:
    key: int
    entry: str
    kernel: Any = attrs.field(eq=False)  # keeps an identity key's id unique


_REGISTRY: TargetRegistry[_Module] = TargetRegistry()


def _spec(x: Any, what: str, i: int) -> _Spec:
    dtype = np.dtype(jax.dtypes.canonicalize_dtype(x.dtype))
    if dtype.name not in _DTYPES:
        raise UnsupportedDtypeError(f'numba_cuda: {what} {i} has dtype {dtype.name}, which numba CUDA kernels cannot '
                                    f'take; supported: {", ".join(_DTYPES)}.')
    return dtype.name, len(x.shape)


def _check_arity(kernel: Any, n_in: int, n_out: int) -> None:
    params = inspect.signature(kernel.py_func).parameters.values()
    if any(p.kind == p.VAR_POSITIONAL for p in params) or len(params) == n_in + n_out:
        return
    raise KernelSpecError(f'numba_cuda kernel {kernel.py_func.__qualname__}: takes {len(params)} arguments; expected '
                          f'{n_in} inputs + {n_out} outputs = {n_in + n_out}. Fix the kernel or the call\'s outs=.')


def _module_for(kernel: Any, specs: tuple[_Spec, ...]) -> _Module:
    fingerprint, portable = numba_backend.describe_kernel(kernel)
    kkey = ('identity', id(kernel)) if fingerprint is None else ('value', fingerprint)
    cc = _cc()

    def create(index: int) -> _Module:
        compiled = compile_kernel(kernel, specs, cc, fingerprint if portable else None)
        _add_module()(compiled.key, compiled.ptx.encode(), compiled.entry.encode())
        return _Module(compiled.key, compiled.entry, kernel)

    return _REGISTRY.get_or_create((kkey, specs, cc), create)


def launcher_call(spec: Any, outs: Sequence[Any], input_output_aliases: Any = None) -> Any:
    """A JAX-traceable ``f(*arrays) -> tuple`` that launches ``spec`` (an ``eventjax.NumbaCudaKernel``) into ``outs``.

    Example:
        >>> spec = NumbaCudaKernel(add, launch_dims=3)  # doctest: +SKIP
        >>> f = launcher_call(spec, [jax.ShapeDtypeStruct((3,), 'float32')])  # doctest: +SKIP
    """
    _check_dispatcher(spec.kernel)
    outs = tuple(jax.ShapeDtypeStruct(o.shape, jax.dtypes.canonicalize_dtype(o.dtype)) for o in outs)
    aliases = {int(k): int(v) for k, v in dict(input_output_aliases or {}).items()}
    if len(outs) > 62 and spec.zero_outputs:
        raise KernelSpecError('numba_cuda: zero_outputs works for up to 62 outputs.')
    zero_mask = sum(1 << i for i in range(len(outs)) if spec.zero_outputs and i not in aliases.values())

    def call(*arrays: Any) -> tuple:
        arrays = tuple(jax.numpy.asarray(a) for a in arrays)
        _check_arity(spec.kernel, len(arrays), len(outs))
        specs = tuple(_spec(a, 'input', i) for i, a in enumerate(arrays)) + \
            tuple(_spec(o, 'output', i) for i, o in enumerate(outs))
        module = _module_for(spec.kernel, specs)
        grid, block = spec.launch(tuple(tuple(a.shape) for a in arrays))
        ffi = jax.ffi.ffi_call(TARGET, outs, vmap_method=spec.vmap_method, input_output_aliases=aliases)
        return tuple(ffi(*arrays, module=np.int64(module.key), grid=np.array(grid, np.int64),
                         block=np.array(block, np.int64), shared_mem=np.int64(spec.shared_mem),
                         zero_mask=np.int64(zero_mask)))

    return call
