"""Physical units through the operators: brainunit ``Quantity`` weights and operands.

A ``Quantity`` weight or operand is split into its mantissa and its unit
before the primitive; the result carries the product of the units (a
dimensionless product comes back as a plain array), as brainevent does. The
primitives, their kernels and their rules only ever see plain arrays, so
``jit``, ``vmap``, ``grad`` and every backend behave as without units. Unit
errors (low and high of a uniform law in ``mV`` and ``nS``) are brainunit's
own.

brainunit is an optional extra and is never imported here unless a
``Quantity`` is passed: a ``Quantity``'s class lives in a module that is
already imported whenever one exists, so ``type(x).__module__`` tells
without importing anything.
"""

from __future__ import annotations

import functools
import sys

__all__ = ['attach', 'conversion_factor', 'is_quantity', 'mantissa', 'product_unit', 'same_unit_pair', 'split',
           'split_product', 'weights_carry_the_unit']

# brainunit's Quantity and Unit are defined in saiunit (brainunit 0.5) or in brainunit itself.
_ROOTS = ('saiunit', 'brainunit')


def _units_module(x):
    """The units package ``x``'s class comes from (already imported), or None."""
    root = type(x).__module__.partition('.')[0]
    return sys.modules.get(root) if root in _ROOTS else None


def is_quantity(x) -> bool:
    """Whether ``x`` is a brainunit ``Quantity`` (imports nothing)."""
    mod = _units_module(x)
    return mod is not None and isinstance(x, mod.Quantity)


def split(x):
    """``(mantissa, unit)`` of a ``Quantity``; ``(x, None)`` for anything else."""
    if is_quantity(x):
        return x.mantissa, x.unit
    return x, None


def mantissa(x):
    """``x``'s numbers without its unit (``x`` itself when it has none)."""
    return split(x)[0]


def split_product(weights, x):
    """Mantissas of ``weights`` and ``x``, and the unit of their product (None when neither has one)."""
    (weights, unit_w), (x, unit_x) = split(weights), split(x)
    return weights, x, product_unit(unit_w, unit_x)


def product_unit(a, b):
    """The unit of a product of values in units ``a`` and ``b`` (None stands for no unit)."""
    if a is None or b is None:
        return b if a is None else a
    return a * b


def same_unit_pair(pair):
    """``(mantissas, unit)`` of a ``(low, high)`` / ``(loc, scale)`` pair, both in the first's unit.

    A pair whose members have different dimensions raises brainunit's own
    error; a pair without units comes back unchanged with unit None.
    """
    first, second = pair
    if not (is_quantity(first) or is_quantity(second)):
        return pair, None
    u = _units_module(first if is_quantity(first) else second)
    unit = first.unit if is_quantity(first) else u.Unit()
    # Quantity.to raises brainunit's UnitMismatchError for a different dimension.
    return (u.Quantity(first).to(unit).mantissa, u.Quantity(second).to(unit).mantissa), unit


def attach(value, unit):
    """``value`` in ``unit`` (``value`` itself when ``unit`` is None; a plain array when dimensionless)."""
    if unit is None:
        return value
    u = _units_module(unit)
    return u.maybe_decimal(u.Quantity(value, unit=unit))


def weights_carry_the_unit(fn):
    """Wrap an operator whose first argument (the weights) is the only one with a unit (events have none).

    The weights' mantissa goes to ``fn``; its result comes back in their unit.

    Example:
        >>> scaled = weights_carry_the_unit(lambda w, x: w * x)
        >>> scaled(2.0, 3.0)
        6.0
    """
    @functools.wraps(fn)
    def wrapper(weights, *args, **kwargs):
        weights, unit = split(weights)
        return attach(fn(weights, *args, **kwargs), unit)
    return wrapper


def conversion_factor(unit, target):
    """The number that turns a value in ``unit`` into ``target`` (None stands for no unit; both None: 1.0).

    A different dimension (``nS`` into ``mV``, or a unit into none) raises
    brainunit's own ``UnitMismatchError``.
    """
    if unit is None and target is None:
        return 1.0
    u = _units_module(unit if target is None else target)
    return float(u.Quantity(1.0, unit=u.Unit() if unit is None else unit).to(
        u.Unit() if target is None else target).mantissa)
