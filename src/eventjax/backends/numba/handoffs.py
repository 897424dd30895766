"""Threads of one parallel numba run handing work to each other: atomic counters and a wait on them.

A ``numba.prange`` loop whose iterations claim pieces of work in order
(:func:`atomic_add`, :func:`compare_swap`) and wait only for the pieces
they read (:func:`wait_at_least`) runs many steps in one parallel run,
where a run per step costs its start each time (~5 us with TBB). Claim a
piece only once it can run, and only ever wait for a piece claimed
earlier: then one thread alone (a runtime may run every iteration on one)
does every piece in order and never waits for itself.

Example:
    >>> import numpy as np
    >>> @numba.njit(parallel=True)
    ... def relay(out):
    ...     done = np.zeros(16, np.int64)  # [0]: pieces claimed; [8]: pieces done (a cache line each)
    ...     for _ in numba.prange(2):
    ...         while True:
    ...             p = atomic_add(done, 0, 1)
    ...             if p >= out.size:
    ...                 break
    ...             wait_at_least(done, 8, p)  # piece p reads what piece p - 1 wrote
    ...             out[p] = (out[p - 1] if p else 0) + 1
    ...             atomic_add(done, 8, 1)
    >>> out = np.zeros(5, np.int64); relay(out); out.tolist()
    [1, 2, 3, 4, 5]
"""

from __future__ import annotations

import numba
from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic

from eventjax.backends.numba.intrinsics import spin_pause

__all__ = ['SPINS_BEFORE_YIELD', 'atomic_add', 'compare_swap', 'load_acquire', 'wait_at_least', 'yield_thread']


def _item_pointer(context, builder, sig, args):
    array = context.make_array(sig.args[0])(context, builder, args[0])
    index = context.cast(builder, args[1], sig.args[1], types.intp)
    return cgutils.get_item_pointer(context, builder, sig.args[0], array, [index], wraparound=False)


_INT64_VECTOR = types.Array(types.int64, 1, 'C')


@intrinsic
def atomic_add(typingctx, ary, index, value):
    """Add ``value`` to ``ary[index]`` (a C-contiguous 1-d int64 array) atomically; return what it held.

    Sequentially consistent: a thread that reads the sum (:func:`load_acquire`) also sees every write the
    adding thread made before it. ``index`` is not checked. Read such a counter with :func:`load_acquire`,
    also after the parallel loop: to the code around it, a plain read of an array made there and written
    only by atomics inside the loop may look like the values it was made with.

    Example:
        >>> import numpy as np
        >>> @numba.njit
        ... def bump(c):
        ...     return atomic_add(c, 1, 5), c[1]
        >>> bump(np.zeros(2, np.int64))
        (0, 5)
    """
    if ary != _INT64_VECTOR or not isinstance(index, types.Integer) or not isinstance(value, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        ptr = _item_pointer(context, builder, sig, args)
        return builder.atomic_rmw('add', ptr, context.cast(builder, args[2], value, types.int64), 'seq_cst')

    return types.int64(ary, index, value), codegen


@intrinsic
def compare_swap(typingctx, ary, index, expected, new):
    """Write ``new`` into ``ary[index]`` (a C-contiguous 1-d int64 array) if it holds ``expected``, atomically;
    return what it held (``expected``: the write happened). Sequentially consistent, as :func:`atomic_add`.

    Example:
        >>> import numpy as np
        >>> @numba.njit
        ... def take(c):
        ...     return compare_swap(c, 0, 3, 4), compare_swap(c, 0, 3, 5), c[0]
        >>> take(np.array([3], np.int64))  # the first takes it; the second finds 4 and writes nothing
        (3, 4, 4)
    """
    if ary != _INT64_VECTOR or not all(isinstance(x, types.Integer) for x in (index, expected, new)):
        return None

    def codegen(context, builder, sig, args):
        ptr = _item_pointer(context, builder, sig, args)
        old, new_ = (context.cast(builder, args[i], sig.args[i], types.int64) for i in (2, 3))
        return builder.extract_value(builder.cmpxchg(ptr, old, new_, 'seq_cst', 'seq_cst'), 0)

    return types.int64(ary, index, expected, new), codegen


@intrinsic
def load_acquire(typingctx, ary, index):
    """``ary[index]`` (a C-contiguous 1-d int64 array) read atomically, with acquire order: after it, every
    write that the thread which stored the value read (:func:`atomic_add`) made before is seen. Read again in
    a loop, it is read each time (a plain read may be read once). ``index`` is not checked.

    Example:
        >>> import numpy as np
        >>> @numba.njit
        ... def read(c):
        ...     return load_acquire(c, 0)
        >>> read(np.array([7], np.int64))
        7
    """
    if ary != _INT64_VECTOR or not isinstance(index, types.Integer):
        return None

    def codegen(context, builder, sig, args):
        ptr = _item_pointer(context, builder, sig, args)
        return builder.load_atomic(ptr, 'acquire', 8)

    return types.int64(ary, index), codegen


@intrinsic
def yield_thread(typingctx):
    """Give the core to another thread that is ready to run (``sched_yield``), if any."""

    def codegen(context, builder, sig, args):
        fn = cgutils.get_or_insert_function(builder.module, ir.FunctionType(ir.IntType(32), []), 'sched_yield')
        builder.call(fn, [])
        return context.get_dummy_value()

    return types.void(), codegen


SPINS_BEFORE_YIELD = 2000
"""Spins (each an x86 ``pause``, ~10 ns: ~20 us in all) before :func:`wait_at_least` starts yielding its core."""


@numba.njit(inline='always')  # an njit function, not register_jitable: the kernel fingerprint walks it
def wait_at_least(ary, index, target):
    """Wait until ``ary[index]`` (1-d int64, raised by another thread's :func:`atomic_add`) is at least
    ``target``: spin a while (the other thread is usually microseconds away), then yield the core at each look
    (where there are more threads than cores, the one waited for may need it).

    Example:
        >>> import numpy as np
        >>> @numba.njit
        ... def ready(c):
        ...     wait_at_least(c, 0, 1)
        ...     return True
        >>> ready(np.ones(1, np.int64))
        True
    """
    spins = 0
    while load_acquire(ary, index) < target:
        if spins < SPINS_BEFORE_YIELD:
            spin_pause()
            spins += 1
        else:
            yield_thread()
