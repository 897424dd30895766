"""Warp helpers shared by every family's ``warp_impl``: types and ``wp.func`` building blocks.

The families' warp kernels are typed from the operands' dtypes at trace time
(see :class:`~eventjax.backends.warp.ByInputDtypes`); warp itself is
imported only then.
"""

# No `from __future__ import annotations`: warp evaluates kernel annotations
# against the factory's local variables, which string annotations cannot see.


import functools

from eventjax.backends.warp import import_warp, warp_dtype

__all__ = ['accumulator_type', 'event_test', 'index_reader', 'kept_row', 'operand_value', 'warp_types']


def warp_types(dtypes) -> tuple:
    """The warp scalar type of each numpy dtype."""
    return tuple(warp_dtype(d) for d in dtypes)


def accumulator_type(wt):
    """Sums of float16 weights run in float32."""
    wp = import_warp()
    return wp.float32 if wt is wp.float16 else wt


@functools.cache
def index_reader(it):
    """A ``wp.func`` reading one stored index as an ``int``, -1 when it does not fit one.

    warp's ``int`` is 32 bits: ``int(x)`` of an int64 index (``jax_enable_x64``)
    such as ``2**33`` would wrap onto column 0, where the jax and numba kernels
    drop it. Read through this, it is -1, which every kernel drops as it drops
    any negative index.
    """
    wp = import_warp()
    if it is wp.int64:
        @wp.func
        def as_index(x: wp.int64) -> int:
            if x < wp.int64(0) or x > wp.int64(2147483647):
                return -1
            return int(x)
    else:
        @wp.func
        def as_index(x: it) -> int:
            return int(x)
    return as_index


@functools.cache
def kept_row(it):
    """A ``wp.func``: the entries ``[start, end)`` of row ``i``, empty for a row whose ``indptr`` range is invalid.

    It takes ``(indptr, i, nnz)``; the invalid ranges (a negative start, an end
    before the start or past ``nnz``) are the ones every backend drops whole.
    """
    wp = import_warp()

    @wp.func
    def kept(indptr: wp.array(dtype=it), i: int, nnz: int):
        start, end = int(indptr[i]), int(indptr[i + 1])
        if start < 0 or end < start or end > nnz:
            return 0, 0
        return start, end

    return kept


@functools.cache
def event_test(ev_t):
    """A ``wp.func`` telling whether one event value is an event (``True`` or ``> 0``)."""
    wp = import_warp()
    if ev_t is wp.bool:
        @wp.func
        def is_event(x: wp.bool) -> bool:
            return x
    else:
        @wp.func
        def is_event(x: ev_t) -> bool:
            return x > ev_t(0)
    return is_event


@functools.cache
def operand_value(xt, at, binary: bool, matrix: bool):
    """A ``wp.func`` reading entry ``j`` (column ``c`` for a matrix) of the vector/matrix operand as ``at``.

    For an event operand (``binary``) the value is 1 where there is an event
    and 0 elsewhere; otherwise it is the entry itself. Every sparse family's
    kernels read their operand through it.
    """
    wp = import_warp()
    is_event = event_test(xt)
    if matrix:
        if binary:
            @wp.func
            def value(x: wp.array2d(dtype=xt), j: int, c: int) -> at:
                if is_event(x[j, c]):
                    return at(1.0)
                return at(0.0)
        else:
            @wp.func
            def value(x: wp.array2d(dtype=xt), j: int, c: int) -> at:
                return at(x[j, c])
    elif binary:
        @wp.func
        def value(x: wp.array(dtype=xt), j: int) -> at:
            if is_event(x[j]):
                return at(1.0)
            return at(0.0)
    else:
        @wp.func
        def value(x: wp.array(dtype=xt), j: int) -> at:
            return at(x[j])
    return value
