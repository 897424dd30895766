"""Warp helpers shared by every family: kernels typed from the operands' dtypes.

Warp kernels are typed, but a warp kernel generator only sees ``outs``, not
the dtypes of the inputs (an int32 or int64 ``indices``, bool or float
events). :func:`warp_by_dtypes` defers the choice to trace time, when the
input arrays are known; warp itself is imported only then.
"""

# No `from __future__ import annotations`: warp evaluates kernel annotations
# against the factory's local variables, which string annotations cannot see.


import functools
from collections.abc import Callable

import jax.numpy as jnp
import numpy as np

from eventjax.backends.warp_bridge import import_warp, warp_dtype, warp_kernel_generator

__all__ = ['accumulator_type', 'event_test', 'operand_value', 'warp_by_dtypes', 'warp_types']


def warp_by_dtypes(factory: Callable, platform: str) -> Callable:
    """A kernel generator for ``def_kernel('warp', platform, ...)``.

    ``factory(dtypes, **static_params, outs=outs)`` returns a warp
    ``WarpKernelSpec`` for input arrays of the given numpy ``dtypes``.
    """
    def kg(*, outs, **static):
        def call(*arrays):
            # A product with an empty operand is all zeros; warp cannot launch on it.
            if any(a.size == 0 for a in arrays) or any(0 in o.shape for o in outs):
                return tuple(jnp.zeros(o.shape, o.dtype) for o in outs)
            dtypes = tuple(np.dtype(a.dtype) for a in arrays)
            inner = warp_kernel_generator(lambda *, outs, **s: factory(dtypes, outs=outs, **s), platform)
            return inner(outs=outs, **static)(*arrays)
        return call
    return kg


def warp_types(dtypes) -> tuple:
    """The warp scalar type of each numpy dtype."""
    return tuple(warp_dtype(d) for d in dtypes)


def accumulator_type(wt):
    """Sums of float16 weights run in float32."""
    wp = import_warp()
    return wp.float32 if wt is wp.float16 else wt


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
