"""Warp helpers for one term ``w (x) x[j]`` of a sparse product, as every backend defines it.

A binary product selects: the term is ``w`` where ``x[j]`` is an event and
exactly 0 elsewhere, whatever ``w`` is (a NaN weight without an event adds
nothing). A float product multiplies: ``w * x[j]`` for every stored entry,
zeros of ``x`` included (``NaN * 0`` is NaN, as in IEEE arithmetic). Every
helper takes a column ``c``, which a vector operand ignores (see
:mod:`~eventjax.kernels.common.warp.columns`).
"""

# No `from __future__ import annotations`: warp evaluates annotations
# against the factory's local variables, which string annotations cannot see.

import functools
from typing import Any, NamedTuple

from eventjax.backends.warp import import_warp
from eventjax.kernels.common.warp.columns import column_access, operand_array
from eventjax.kernels.common.warp.typing import accumulator_type, event_test

__all__ = ['ProductParts', 'product_parts', 'row_is_idle', 'weighted_term']


@functools.cache
def _event_at(xt, matrix: bool):
    wp = import_warp()
    is_event, load = event_test(xt), column_access(xt, matrix)[0]

    @wp.func
    def event_at(x: operand_array(xt, matrix), j: int, c: int) -> bool:
        return is_event(load(x, j, c))

    return event_at


@functools.cache
def weighted_term(xt, at, binary: bool, matrix: bool):
    """A ``wp.func`` ``term(w, x, j, c) -> at`` for a weight ``w`` (already ``at``) and entry ``x[j(, c)]``."""
    wp = import_warp()
    xa = operand_array(xt, matrix)
    if binary:
        event_at = _event_at(xt, matrix)

        @wp.func
        def selected(w: at, x: xa, j: int, c: int) -> at:
            if event_at(x, j, c):
                return w
            return at(0.0)

        return selected
    load = column_access(xt, matrix)[0]

    @wp.func
    def product(w: at, x: xa, j: int, c: int) -> at:
        return w * at(load(x, j, c))

    return product


@functools.cache
def row_is_idle(xt, binary: bool, matrix: bool):
    """A ``wp.func`` ``idle(x, i, c)``: a scatter thread has nothing to add (only a binary one without an event)."""
    wp = import_warp()
    xa = operand_array(xt, matrix)
    if not binary:
        @wp.func
        def never_idle(x: xa, i: int, c: int) -> bool:
            return False

        return never_idle
    event_at = _event_at(xt, matrix)

    @wp.func
    def idle(x: xa, i: int, c: int) -> bool:
        return not event_at(x, i, c)

    return idle


class ProductParts(NamedTuple):
    """What a sparse product's gather and scatter kernels are built from; unpack it into the factory's locals."""

    at: Any  # accumulator type
    term: Any  # weighted_term
    idle: Any  # row_is_idle
    x_array: Any  # annotation of x
    out_array: Any  # annotation of a gather's output (weight type)
    acc_array: Any  # annotation of a scatter's output (accumulator type)
    store: Any  # store(out, i, c, v) into a gather's output
    add: Any  # add(out, j, c, v), atomic, into a scatter's output


@functools.cache
def product_parts(wt, xt, binary: bool, matrix: bool) -> ProductParts:
    """The :class:`ProductParts` for weights of warp type ``wt`` and an operand of ``xt``.

    Example:
        >>> at, term, idle, xa, wa, aa, store, add = product_parts(wp.float32, wp.bool, True, False)  # doctest: +SKIP
    """
    at = accumulator_type(wt)
    return ProductParts(at, weighted_term(xt, at, binary, matrix), row_is_idle(xt, binary, matrix),
                        operand_array(xt, matrix), operand_array(wt, matrix), operand_array(at, matrix),
                        column_access(wt, matrix)[1], column_access(at, matrix)[2])
