"""Warp helpers that let one kernel body serve a vector (mv) and a matrix (mm) operand.

A kernel written against these runs on a 2-d grid, ``i, c = wp.tid()``,
and takes the column ``c`` everywhere: for a matrix it is the thread's
column of ``B``; a vector is launched on ``(rows, 1)`` (:func:`column_grid`)
and ignores ``c``, so its kernel compiles to the same loads and stores as
one written for a vector alone.
"""

# No `from __future__ import annotations`: warp evaluates annotations
# against the factory's local variables, which string annotations cannot see.

import functools

from eventjax.backends.warp import import_warp

__all__ = ['column_access', 'column_grid', 'operand_array']


def column_grid(shape) -> tuple[int, int]:
    """The launch grid over ``shape``: itself for a matrix, ``(rows, 1)`` for a vector.

    Example:
        >>> column_grid((5,)), column_grid((5, 3))
        ((5, 1), (5, 3))
    """
    return (shape[0], shape[1] if len(shape) > 1 else 1)


def operand_array(t, matrix: bool):
    """The warp array annotation of an operand of scalar type ``t``: 2-d for a matrix, 1-d for a vector."""
    wp = import_warp()
    return wp.array2d(dtype=t) if matrix else wp.array(dtype=t)


@functools.cache
def column_access(t, matrix: bool):
    """``(load, store, add)`` as ``wp.func`` on entry ``(j, c)`` of a matrix, or entry ``j`` of a vector.

    ``load(a, j, c) -> t``, ``store(a, j, c, v)`` and ``add(a, j, c, v)`` (an
    ``atomic_add``); a vector ignores ``c``.
    """
    wp = import_warp()
    if matrix:
        @wp.func
        def load(a: wp.array2d(dtype=t), j: int, c: int) -> t:
            return a[j, c]

        @wp.func
        def store(a: wp.array2d(dtype=t), j: int, c: int, v: t):
            a[j, c] = v

        @wp.func
        def add(a: wp.array2d(dtype=t), j: int, c: int, v: t):
            wp.atomic_add(a, j, c, v)
    else:
        @wp.func
        def load(a: wp.array(dtype=t), j: int, c: int) -> t:
            return a[j]

        @wp.func
        def store(a: wp.array(dtype=t), j: int, c: int, v: t):
            a[j] = v

        @wp.func
        def add(a: wp.array(dtype=t), j: int, c: int, v: t):
            wp.atomic_add(a, j, v)
    return load, store, add
