"""The compiled glue of the numba bridge: raw memory access, and errors reported to XLA.

A handler reads the XLA call frame and builds XLA errors through these
intrinsics and njit helpers, so it touches no Python object. Kernels call
:func:`report_error` to fail with a message.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import llvmlite.binding
import numba
import numpy as np
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from eventjax.backends import ffi_abi

__all__ = ['ERROR_BUFFER_LEN', 'report_error']

ERROR_BUFFER_LEN = 512
"""Bytes of the buffer a kernel writes its error message into."""


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
# with llvmlite.binding.add_symbol (see numba_threads).


@intrinsic
def launch_begin(typingctx):
    """Call ``int64 eventjax_numba_launch_begin(void)`` before a parallel run."""

    def codegen(context, builder, sig, args):
        return _call_symbol(builder, 'eventjax_numba_launch_begin', [])

    return types.int64(), codegen


@intrinsic
def launch_end(typingctx):
    """Call ``int64 eventjax_numba_launch_end(void)`` after a parallel run."""

    def codegen(context, builder, sig, args):
        return _call_symbol(builder, 'eventjax_numba_launch_end', [])

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
