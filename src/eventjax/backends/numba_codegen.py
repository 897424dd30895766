"""Generates and compiles the numba ``cfunc`` XLA FFI handler of one kernel.

A handler is Python source specialised to one (kernel, dtypes, ranks)
combination. It is written to a file named by a content hash and imported
from there, because numba can only cache (``cache=True``) functions defined
in a real file; the hash makes two different kernels never share a file, so
they never share a cache entry. The handler reads the XLA call frame with the
intrinsics below, checks it against what was traced, wraps each buffer with
``numba.carray`` and calls the kernel; it touches no Python object.
"""

import hashlib
import importlib.util
import os
import sys
import tempfile
import threading

import llvmlite.binding
import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from eventjax.backends import ffi_abi
from eventjax.config.cache import handler_dir

ERROR_BUFFER_LEN = 512
"""Bytes of the buffer a kernel writes its error message into."""


# --- Intrinsics: raw memory access, the only glue numba needs ---------------

@intrinsic
def load_i64(typingctx, addr):
    """Read the int64 at address ``addr``."""
    def codegen(context, builder, sig, args):
        ptr = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        return builder.load(ptr)
    return types.int64(types.int64), codegen


@intrinsic
def load_i32(typingctx, addr):
    """Read the int32 at ``addr`` (C enums: 4 bytes, then padding)."""
    def codegen(context, builder, sig, args):
        ptr = builder.inttoptr(args[0], ir.IntType(32).as_pointer())
        return builder.sext(builder.load(ptr), ir.IntType(64))
    return types.int64(types.int64), codegen


@intrinsic
def store_i64(typingctx, addr, value):
    """Write ``value`` as an int64 at ``addr``."""
    def codegen(context, builder, sig, args):
        ptr = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        builder.store(args[1], ptr)
        return context.get_dummy_value()
    return types.void(types.int64, types.int64), codegen


@intrinsic
def store_i32(typingctx, addr, value):
    """Write ``value`` truncated to an int32 at ``addr``."""
    def codegen(context, builder, sig, args):
        ptr = builder.inttoptr(args[0], ir.IntType(32).as_pointer())
        builder.store(builder.trunc(args[1], ir.IntType(32)), ptr)
        return context.get_dummy_value()
    return types.void(types.int64, types.int64), codegen


@intrinsic
def as_voidptr(typingctx, addr):
    """Turn an int64 address into a ``void*``."""
    def codegen(context, builder, sig, args):
        return builder.inttoptr(args[0], cgutils.voidptr_t)
    return types.voidptr(types.int64), codegen


@intrinsic
def address_of(typingctx, ptr):
    """Turn a ``void*`` into its int64 address."""
    def codegen(context, builder, sig, args):
        return builder.ptrtoint(args[0], ir.IntType(64))
    return types.int64(types.voidptr), codegen


@intrinsic
def call_ptr(typingctx, fn, arg):
    """Call the C function ``void* fn(void*)`` at address ``fn``."""
    def codegen(context, builder, sig, args):
        fnty = ir.FunctionType(cgutils.voidptr_t, [cgutils.voidptr_t])
        fptr = builder.inttoptr(args[0], fnty.as_pointer())
        res = builder.call(fptr, [builder.inttoptr(args[1], cgutils.voidptr_t)])
        return builder.ptrtoint(res, ir.IntType(64))
    return types.int64(types.int64, types.int64), codegen


@intrinsic
def cas_i64(typingctx, addr, expected, new):
    """Atomically swap ``new`` into ``addr`` if it holds ``expected``.

    Returns the value found at ``addr``.
    """
    def codegen(context, builder, sig, args):
        ptr = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        res = builder.cmpxchg(ptr, args[1], args[2], "seq_cst", "seq_cst")
        return builder.extract_value(res, 0)
    return types.int64(types.int64, types.int64, types.int64), codegen


@intrinsic
def spin_pause(typingctx):
    """Let the core breathe in a spin loop (x86 ``pause``, else nothing)."""
    def codegen(context, builder, sig, args):
        if "86" in llvmlite.binding.get_process_triple().split("-")[0]:
            fn = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(ir.VoidType(), []),
                "llvm.x86.sse2.pause")
            builder.call(fn, [])
        return context.get_dummy_value()
    return types.void(), codegen


def _call_symbol(builder, symbol, args):
    fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64)] * len(args))
    fn = cgutils.get_or_insert_function(builder.module, fnty, symbol)
    return builder.call(fn, list(args))


# These call C functions by symbol name, resolved when the code is loaded,
# so code calling them can be cached on disk; each process binds the names
# with llvmlite.binding.add_symbol (see numba_bridge).

@intrinsic
def launch_begin(typingctx):
    """Call ``int64 eventjax_numba_launch_begin(void)`` before a parallel run."""
    def codegen(context, builder, sig, args):
        return _call_symbol(builder, "eventjax_numba_launch_begin", [])
    return types.int64(), codegen


@intrinsic
def launch_end(typingctx):
    """Call ``int64 eventjax_numba_launch_end(void)`` after a parallel run."""
    def codegen(context, builder, sig, args):
        return _call_symbol(builder, "eventjax_numba_launch_end", [])
    return types.int64(), codegen


# --- Error reporting, callable from kernels and handlers --------------------

@numba.njit(cache=True)
def report_error(err, message):
    """Record ``message`` in the kernel's error buffer ``err``.

    The handler turns a non-empty buffer into an XLA FFI error, which JAX
    raises as an exception carrying ``message``. Only the first report is
    kept; the message is cut to fit the buffer.

    Args:
        err: the error buffer the bridge passes as the kernel's last argument.
        message: a numba unicode string (``str(i)`` may build it).

    Example:
        >>> @numba.njit
        ... def gather(idx, x, out, err):
        ...     for i in range(idx.size):
        ...         if not 0 <= idx[i] < x.size:
        ...             report_error(err, "gather: index " + str(idx[i])
        ...                          + " out of range")
        ...             return
        ...         out[i] = x[idx[i]]
    """
    if err[0] != 0:
        return
    n = min(len(message), err.size - 1)
    for i in range(n):
        c = ord(message[i])
        err[i] = c if c < 128 else 63  # non-ASCII becomes '?'
    err[n] = 0


@numba.njit(cache=True)
def make_error(api, errc, err):
    """Build an ``XLA_FFI_Error*`` from the NUL-terminated bytes ``err``."""
    args = np.zeros(ffi_abi.ERROR_ARGS_WORDS, np.int64)
    base = args.ctypes.data
    store_i64(base, ffi_abi.ERROR_ARGS_STRUCT_SIZE)
    store_i64(base + ffi_abi.ERROR_ARGS_MESSAGE, err.ctypes.data)
    store_i32(base + ffi_abi.ERROR_ARGS_ERRC, errc)
    fn = load_i64(api + ffi_abi.API_ERROR_CREATE)
    # Error_Create copies the message, so err may be freed afterwards.
    return call_ptr(fn, base)


@numba.njit(cache=True)
def fail(api, errc, message):
    """Return an ``XLA_FFI_Error*`` carrying ``message``."""
    err = np.zeros(ERROR_BUFFER_LEN, np.uint8)
    report_error(err, message)
    return make_error(api, errc, err)


# --- Source generation ------------------------------------------------------

_HEADER = """\
# Generated by eventjax.backends.numba_codegen for kernel {name}.
import numba
import numpy as np
from eventjax.backends import ffi_abi as A
from eventjax.backends.numba_codegen import (
    load_i64, load_i32, store_i64, store_i32, as_voidptr, address_of,
    fail, make_error, launch_begin, launch_end, ERROR_BUFFER_LEN)

kernel = None  # the user's njit kernel, bound before compilation


@numba.njit
def run({params}):
    try:
        {call}
    except Exception:
        return 1
    return 0


def handler(frame_p):
    frame = address_of(frame_p)
    ext = load_i64(frame + A.FRAME_EXTENSION_START)
    if ext != 0 and load_i32(ext + A.EXT_BASE_TYPE) == A.EXTENSION_METADATA:
        meta = load_i64(ext + A.EXT_METADATA_PTR)
        store_i64(meta + A.METADATA_API_VERSION, A.API_VERSION_STRUCT_SIZE)
        store_i64(meta + A.METADATA_API_VERSION + 8, 0)
        store_i32(meta + A.METADATA_API_MAJOR, {major})
        store_i32(meta + A.METADATA_API_MINOR, {minor})
        store_i32(meta + A.METADATA_TRAITS, 0)
        return as_voidptr(0)
    api = load_i64(frame + A.FRAME_API)
    if load_i32(frame + A.FRAME_STAGE) != A.STAGE_EXECUTE:
        return as_voidptr(0)
"""

_LIST = """\
    n = load_i64(frame + {base} + A.LIST_SIZE)
    if n != {count}:
        return as_voidptr(fail(api, A.ERRC_INVALID_ARGUMENT,
            "{where}: expected {count} {what}, XLA passed " + str(n)))
    types_ = load_i64(frame + {base} + A.LIST_TYPES)
    items = load_i64(frame + {base} + A.LIST_ITEMS)
"""

_BUFFER = """\
    if load_i32(types_ + {i} * 4) != A.ARG_TYPE_BUFFER:
        return as_voidptr(fail(api, A.ERRC_INVALID_ARGUMENT,
            "{where}: {what} {i} is not a buffer"))
    b = load_i64(items + {i} * 8)
    dt = load_i32(b + A.BUFFER_DTYPE)
    rk = load_i64(b + A.BUFFER_RANK)
    if dt != {code} or rk != {rank}:
        return as_voidptr(fail(api, A.ERRC_INVALID_ARGUMENT,
            "{where}: {what} {i} must be {dtype}[rank {rank}], got XLA "
            "dtype code " + str(dt) + " rank " + str(rk)))
    d = load_i64(b + A.BUFFER_DIMS)
    {var} = numba.carray(as_voidptr(load_i64(b + A.BUFFER_DATA)),
                         ({shape}), np.{dtype})
"""

_FOOTER = """\
    err = np.zeros(ERROR_BUFFER_LEN, np.uint8)
    {begin}status = run({args})
    {end}if status != 0 and err[0] == 0:
        return as_voidptr(fail(api, A.ERRC_INTERNAL,
            "{where}: the kernel raised an exception; numba cannot carry its "
            "message out of compiled code, report errors with "
            "eventjax.backends.numba_bridge.report_error(err, message)"))
    if err[0] != 0:
        return as_voidptr(make_error(api, A.ERRC_INVALID_ARGUMENT, err))
    return as_voidptr(0)
"""


def handler_source(name, in_specs, out_specs, takes_err, parallel):
    """Python source of the handler module for one kernel signature.

    ``in_specs``/``out_specs`` are sequences of ``(numpy dtype, rank)``.
    """
    major, minor = ffi_abi.api_version()
    n_in, n_out = len(in_specs), len(out_specs)
    in_vars = [f"i{k}" for k in range(n_in)]
    out_vars = [f"o{k}" for k in range(n_out)]
    kargs = in_vars + out_vars + (["err"] if takes_err else [])
    where = f"numba kernel {name}"
    parts = [_HEADER.format(
        name=name, params=", ".join(in_vars + out_vars + ["err"]),
        call=f"kernel({', '.join(kargs)})", major=major, minor=minor)]
    for base, specs, vars_, what in (
            ("A.FRAME_ARGS", in_specs, in_vars, "input"),
            ("A.FRAME_RETS", out_specs, out_vars, "output")):
        parts.append(_LIST.format(base=base, count=len(specs), where=where,
                                  what=what + "s"))
        for i, ((dtype, rank), var) in enumerate(zip(specs, vars_)):
            shape = "".join(f"load_i64(d + {8 * j}), " for j in range(rank))
            parts.append(_BUFFER.format(
                i=i, var=var, where=where, what=what, rank=rank, shape=shape,
                code=ffi_abi.DATATYPE[np.dtype(dtype)],
                dtype=np.dtype(dtype).name))
    parts.append(_FOOTER.format(
        args=", ".join(in_vars + out_vars + ["err"]), where=where,
        begin="launch_begin()\n    " if parallel else "",
        end="launch_end()\n    " if parallel else ""))
    return "".join(parts)


# --- Compilation ------------------------------------------------------------

_import_lock = threading.Lock()
_HANDLER_SIG = types.voidptr(types.voidptr)


def _source_dir():
    path = handler_dir(numba.config.CACHE_DIR or "")
    try:
        os.makedirs(path, exist_ok=True)
        return path, True
    except OSError:
        # Not writable: compile from a private folder, without disk cache.
        return tempfile.mkdtemp(prefix="eventjax_numba_"), False


def compile_handler(kernel, fingerprint, source):
    """Compile ``source`` into a cfunc bound to ``kernel``; return the cfunc.

    ``fingerprint`` identifies the kernel's code across processes; together
    with the source it names the file, hence the numba cache entry.
    """
    digest = hashlib.sha256(
        (repr(fingerprint) + "\0" + source).encode()).hexdigest()[:24]
    folder, cacheable = _source_dir()
    modname = f"eventjax_numba_handler_{digest}"
    path = os.path.join(folder, modname + ".py")
    with _import_lock:
        if not os.path.exists(path):
            # Write then rename: another process may be reading this file,
            # and an unchanged mtime keeps numba's cache entry valid.
            fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                f.write(source)
            os.replace(tmp, path)
        spec = importlib.util.spec_from_file_location(modname, path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    module.kernel = kernel
    # A fresh module per target: its globals are what numba freezes.
    sys.modules.setdefault(modname, module)
    return numba.cfunc(_HANDLER_SIG, cache=cacheable)(module.handler)
