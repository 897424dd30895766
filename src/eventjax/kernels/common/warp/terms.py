"""Warp helpers for one term ``w (x) x[j]`` of a sparse product, as every backend defines it.

A binary product selects: the term is ``w`` where ``x[j]`` is an event and
exactly 0 elsewhere, whatever ``w`` is (a NaN weight without an event adds
nothing). A float product multiplies: ``w * x[j]`` for every stored entry,
zeros of ``x`` included (``NaN * 0`` is NaN, as in IEEE arithmetic).
"""

# No `from __future__ import annotations`: warp evaluates annotations
# against the factory's local variables, which string annotations cannot see.

import functools

from eventjax.backends.warp import import_warp
from eventjax.kernels.common.warp.typing import event_test

__all__ = ['row_is_idle', 'weighted_term']


@functools.cache
def weighted_term(xt, at, binary: bool, matrix: bool):
    """A ``wp.func`` ``term(w, x, j[, c]) -> at`` for a weight ``w`` (already ``at``) and entry ``x[j(, c)]``."""
    wp = import_warp()
    is_event = event_test(xt)
    if matrix:
        if binary:
            @wp.func
            def term(w: at, x: wp.array2d(dtype=xt), j: int, c: int) -> at:
                if is_event(x[j, c]):
                    return w
                return at(0.0)
        else:
            @wp.func
            def term(w: at, x: wp.array2d(dtype=xt), j: int, c: int) -> at:
                return w * at(x[j, c])
    elif binary:
        @wp.func
        def term(w: at, x: wp.array(dtype=xt), j: int) -> at:
            if is_event(x[j]):
                return w
            return at(0.0)
    else:
        @wp.func
        def term(w: at, x: wp.array(dtype=xt), j: int) -> at:
            return w * at(x[j])
    return term


@functools.cache
def row_is_idle(xt, binary: bool, matrix: bool):
    """A ``wp.func`` telling a scatter thread it has nothing to add: only a binary one without an event."""
    wp = import_warp()
    is_event = event_test(xt)
    if matrix and binary:
        @wp.func
        def idle(x: wp.array2d(dtype=xt), i: int, c: int) -> bool:
            return not is_event(x[i, c])
    elif matrix:
        @wp.func
        def idle(x: wp.array2d(dtype=xt), i: int, c: int) -> bool:
            return False
    elif binary:
        @wp.func
        def idle(x: wp.array(dtype=xt), i: int) -> bool:
            return not is_event(x[i])
    else:
        @wp.func
        def idle(x: wp.array(dtype=xt), i: int) -> bool:
            return False
    return idle
