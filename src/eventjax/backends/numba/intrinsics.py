"""The compiled glue of the numba bridge: raw memory access, and errors reported to XLA.

A handler reads the XLA call frame and builds XLA errors through these
intrinsics and njit helpers, so it touches no Python object. Kernels call
:func:`report_error` to fail with a message. A kernel that raises is called
through :func:`call_kernel`, which only on that error path takes the GIL to
turn the exception numba kept (its class and constant arguments) into text.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Sequence
from typing import Any

import llvmlite.binding
import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic, register_jitable

from eventjax.backends.numba import ffi_abi

__all__ = ['ERROR_BUFFER_LEN', 'report_error']

ERROR_BUFFER_LEN = 512
"""Bytes of the buffer a kernel writes its error message into."""
_ERROR_ARGS_BYTES = ffi_abi.ERROR_ARGS_WORDS * 8  # a global, so numba sees a constant


# --- Intrinsics: raw memory access, the only glue numba needs ----------------


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
def stack_bytes(typingctx, nbytes):
    """The address of ``nbytes`` zeroed bytes in the calling function's stack frame (``nbytes`` a constant).

    For the handler's error buffer and the error arguments: numpy's
    allocation (``np.zeros``) compiles helpers of its own, a fifth of a
    trivial kernel's first call, and the memory lives only for the call anyway.
    """
    if not isinstance(nbytes, types.IntegerLiteral):
        raise numba.core.errors.TypingError('stack_bytes: the size must be a compile-time constant')
    size = nbytes.literal_value

    def codegen(context, builder, sig, args):
        ptr = cgutils.alloca_once(builder, ir.IntType(8), size=size)
        cgutils.memset(builder, ptr, ir.Constant(ir.IntType(64), size), 0)
        return builder.ptrtoint(ptr, ir.IntType(64))

    return types.int64(nbytes), codegen


@intrinsic
def array_at(typingctx, addr, shape, dtype):
    """The C-ordered array of ``shape`` and ``dtype`` over the memory at ``addr`` (an int64), owned elsewhere.

    What ``numba.carray`` gives, lowered in place: ``carray`` is an overload
    that numba compiles once per dtype and rank, one more compile of a
    handler's first call for each kind of buffer it views.
    """
    # Imported when a handler is typed, not with this module: a handler loaded from the disk cache
    # runs without numba's array implementations, and importing them costs that path its speed.
    from numba.core.typing.npydecl import parse_shape
    from numba.np.arrayobj import np_cfarray

    ndim = parse_shape(shape)
    if addr != types.int64 or ndim is None or not isinstance(dtype, types.DTypeSpec):
        raise numba.core.errors.TypingError(f'array_at(addr, shape, dtype): got ({addr}, {shape}, {dtype})')
    array = types.Array(dtype.dtype, ndim, 'C')

    def codegen(context, builder, sig, args):
        ptr = builder.inttoptr(args[0], cgutils.voidptr_t)
        return np_cfarray(context, builder, array(types.voidptr, *sig.args[1:]), (ptr, *args[1:]))

    return array(addr, shape, dtype), codegen


@intrinsic
def empty_vector(typingctx, n, dtype):
    """A new uninitialised 1-D array of ``n`` items of ``dtype``, what ``np.empty(n, dtype)`` gives.

    Lowered in place: ``np.empty`` is an overload that numba compiles once
    per dtype, one more compile of a kernel's first call (about 0.08 s) for
    each scratch array it allocates. The array is reference-counted by
    numba's runtime like any other.

    Example:
        >>> @numba.njit
        ... def squares(n):
        ...     out = empty_vector(n, np.int64)
        ...     for i in range(n):
        ...         out[i] = i * i
        ...     return out
        >>> squares(4).tolist()
        [0, 1, 4, 9]
    """
    from numba.np.arrayobj import _empty_nd_impl

    if not isinstance(n, types.Integer) or not isinstance(dtype, types.DTypeSpec):
        raise numba.core.errors.TypingError(f'empty_vector(n, dtype): got ({n}, {dtype})')
    array = types.Array(dtype.dtype, 1, 'C')

    def codegen(context, builder, sig, args):
        size = context.cast(builder, args[0], sig.args[0], types.intp)
        return _empty_nd_impl(context, builder, array, [size])._getvalue()

    return array(n, dtype), codegen


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
    """Atomically swap ``new`` into ``addr`` if it holds ``expected``; return the value found."""

    def codegen(context, builder, sig, args):
        ptr = builder.inttoptr(args[0], ir.IntType(64).as_pointer())
        res = builder.cmpxchg(ptr, args[1], args[2], 'seq_cst', 'seq_cst')
        return builder.extract_value(res, 0)

    return types.int64(types.int64, types.int64, types.int64), codegen


@intrinsic
def spin_pause(typingctx):
    """Let the core breathe in a spin loop (x86 ``pause``, else nothing)."""

    def codegen(context, builder, sig, args):
        if '86' in llvmlite.binding.get_process_triple().split('-')[0]:
            fnty = ir.FunctionType(ir.VoidType(), [])
            builder.call(cgutils.get_or_insert_function(builder.module, fnty, 'llvm.x86.sse2.pause'), [])
        return context.get_dummy_value()

    return types.void(), codegen


@intrinsic
def prefetch(typingctx, ary, index):
    """Ask the caches for ``ary[index]`` ahead of a read (``index``: an integer, or a tuple of ``ary.ndim``).

    Only a hint: it never faults, even out of bounds, and changes no result.
    Worth it where the next reads are scattered over memory the hardware
    prefetcher cannot predict (the event columns of the next dense row).

    Example:
        >>> @numba.njit
        ... def total(x):
        ...     prefetch(x, 1)
        ...     return x.sum()
        >>> float(total(np.ones(4)))
        4.0
    """
    if not isinstance(ary, types.Array):
        return None
    if isinstance(index, types.Integer) and ary.ndim == 1:
        index_types = [index]
    elif isinstance(index, types.BaseTuple) and len(index) == ary.ndim and \
            all(isinstance(t, types.Integer) for t in index):
        index_types = list(index)
    else:
        return None

    def codegen(context, builder, sig, args):
        array = context.make_array(ary)(context, builder, args[0])
        raw = [args[1]] if isinstance(index, types.Integer) else cgutils.unpack_tuple(builder, args[1], ary.ndim)
        indices = [context.cast(builder, i, t, types.intp) for i, t in zip(raw, index_types)]
        ptr = cgutils.get_item_pointer(context, builder, ary, array, indices, wraparound=False)
        i8p = ir.IntType(8).as_pointer()
        i32 = ir.IntType(32)
        fnty = ir.FunctionType(ir.VoidType(), [i8p, i32, i32, i32])
        fn = cgutils.get_or_insert_function(builder.module, fnty, 'llvm.prefetch.p0i8')
        # A read (0), kept in every cache level (3), of data (1).
        builder.call(fn, [builder.bitcast(ptr, i8p), ir.Constant(i32, 0), ir.Constant(i32, 3), ir.Constant(i32, 1)])
        return context.get_dummy_value()

    return types.void(ary, index), codegen


def _call_symbol(builder, symbol: str, args: Sequence) -> Any:
    fnty = ir.FunctionType(ir.IntType(64), [ir.IntType(64)] * len(args))
    fn = cgutils.get_or_insert_function(builder.module, fnty, symbol)
    return builder.call(fn, list(args))


# These call C functions by symbol name, resolved when the code is loaded,
# so code calling them can be cached on disk; each process binds the names
# with llvmlite.binding.add_symbol (see threads).


@intrinsic
def launch_begin(typingctx):
    """Call ``int64 eventjax_numba_launch_begin(void)`` before a parallel run; it returns the run's thread count."""

    def codegen(context, builder, sig, args):
        return _call_symbol(builder, 'eventjax_numba_launch_begin', [])

    return types.int64(), codegen


@intrinsic
def launch_end(typingctx):
    """Call ``int64 eventjax_numba_launch_end(void)`` after a parallel run."""

    def codegen(context, builder, sig, args):
        return _call_symbol(builder, 'eventjax_numba_launch_end', [])

    return types.int64(), codegen


# --- Calling a kernel and keeping the message of what it raised ------------


def describe_exception(exc_type: Any, exc_value: Any, address: int, size: int, where: str) -> None:
    """Write ``"<Class>: <message> (raised in <where>)"`` as NUL-terminated ASCII at ``address``.

    Called with the GIL held by :func:`call_kernel`'s error path, with the
    exception numba raised (the pair ``PyErr_Fetch`` returned).
    """
    if exc_type is None:
        return
    if exc_value is None or not isinstance(exc_value, BaseException):
        args = exc_value if isinstance(exc_value, tuple) else (() if exc_value is None else (exc_value,))
        exc_value = exc_type(*args)
    text = f'{exc_type.__name__}: {exc_value} (raised in {where})' if str(exc_value) else \
        f'{exc_type.__name__} (raised in {where})'
    data = text.encode('ascii', 'replace')[:size - 1] + b'\0'
    ctypes.memmove(address, data, len(data))


@intrinsic
def call_kernel(typingctx, kernel, args, err, where):
    """Call the njit ``kernel(*args)``; return 0, or 1 after writing what it raised into ``err``.

    ``where`` (a string constant) names the kernel in the message. The
    success path is a plain native call; only when the kernel raised does
    the handler take the GIL, let numba rebuild the exception from what it
    kept (class and constant arguments, or the values of a dynamic raise)
    and :func:`describe_exception` write ``"ValueError: ..."`` into ``err``.
    """
    if not isinstance(kernel, types.Dispatcher) or not isinstance(args, types.BaseTuple) \
            or not isinstance(where, types.StringLiteral):
        return None
    kernel_sig = typingctx.resolve_function_type(kernel, tuple(args.types), {})
    if kernel_sig is None:
        return None
    label = where.literal_value

    def codegen(context, builder, sig, llargs):
        cres = kernel.dispatcher.overloads[tuple(kernel_sig.args)]
        fnty = context.call_conv.get_function_type(kernel_sig.return_type, kernel_sig.args)
        callee = cgutils.get_or_insert_function(builder.module, fnty, cres.fndesc.llvm_func_name)
        context.add_linking_libs([cres.library])
        values = cgutils.unpack_tuple(builder, llargs[1], len(args.types))
        values = [context.cast(builder, v, t, want) for v, t, want in zip(values, args.types, kernel_sig.args)]
        status, _ = context.call_conv.call_function(builder, callee, kernel_sig.return_type, kernel_sig.args,
                                                    values)
        with builder.if_then(status.is_error, likely=False):
            buffer = context.make_array(sig.args[2])(context, builder, llargs[2])
            pyapi = context.get_python_api(builder)
            gil = pyapi.gil_ensure()
            context.call_conv.raise_error(builder, pyapi, status)
            slots = [cgutils.alloca_once_value(builder, pyapi.get_null_object()) for _ in range(3)]
            pyapi.err_fetch(*slots)
            exc_type, exc_value, exc_tb = (builder.load(slot) for slot in slots)
            # The label travels inside the pickled callable: no string is built in compiled code.
            describe = pyapi.unserialize(pyapi.serialize_object(functools.partial(describe_exception, where=label)))
            address = pyapi.long_from_longlong(builder.ptrtoint(buffer.data, ir.IntType(64)))
            size = pyapi.long_from_longlong(buffer.nitems)
            none = pyapi.make_none()
            result = pyapi.call_function_objargs(describe, [
                builder.select(cgutils.is_null(builder, exc_type), none, exc_type),
                builder.select(cgutils.is_null(builder, exc_value), none, exc_value),
                address, size])
            for obj in (result, describe, address, size, none, exc_type, exc_value, exc_tb):
                pyapi.decref(obj)
            pyapi.err_clear()  # a failure to describe leaves the generic message, never a Python error
            pyapi.gil_release(gil)
        return builder.select(status.is_ok, ir.Constant(ir.IntType(64), 0), ir.Constant(ir.IntType(64), 1))

    return types.int64(kernel, args, err, where), codegen


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
        ...             report_error(err, 'gather: index ' + str(idx[i]) + ' out of range')
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
def _error_at(api, errc, message):
    """Build an ``XLA_FFI_Error*`` from the NUL-terminated bytes at address ``message``."""
    base = stack_bytes(_ERROR_ARGS_BYTES)
    store_i64(base, ffi_abi.ERROR_ARGS_STRUCT_SIZE)
    store_i64(base + ffi_abi.ERROR_ARGS_MESSAGE, message)
    store_i32(base + ffi_abi.ERROR_ARGS_ERRC, errc)
    fn = load_i64(api + ffi_abi.API_ERROR_CREATE)
    # Error_Create copies the message, so it may be freed afterwards.
    return call_ptr(fn, base)


# The two below are register_jitable, not njit: whatever the array types (a
# handler's frozen, read-only messages, a kernel's error buffer), the one
# compiled helper they call takes an address, so it compiles once.
@register_jitable
def make_error(api, errc, err):
    """Build an ``XLA_FFI_Error*`` from the NUL-terminated bytes ``err``."""
    return _error_at(api, errc, err.ctypes.data)


# The handler's own errors are whole messages fixed when it is generated, stored
# as byte arrays numba freezes into it: building text at run time (numba
# strings, or digits) was most of a cold first call's compile time.
def message_bytes(text: str) -> np.ndarray:
    """``text`` as the NUL-terminated ASCII bytes :func:`fail` takes (non-ASCII becomes ``?``, cut to fit).

    Example:
        >>> message_bytes('bad')
        array([ 98,  97, 100,   0], dtype=uint8)
    """
    data = text.encode('ascii', 'replace')[:ERROR_BUFFER_LEN - 1] + b'\0'
    return np.frombuffer(data, np.uint8)


@register_jitable
def fail(api, errc, message):
    """Return an ``XLA_FFI_Error*`` carrying ``message`` (a :func:`message_bytes` array)."""
    return _error_at(api, errc, message.ctypes.data)
