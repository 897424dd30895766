"""The wrappers around a registered kernel generator, outermost first: what ``eventjax info --kernel`` prints.

A wrapper that turns one kernel generator into another records what it
wraps with :func:`link`; :func:`chain` follows the records from the
generator a primitive registered down to the one its author wrote.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

__all__ = ['chain', 'link', 'where']

# Not ``__wrapped__``: inspect.signature follows that, and the machinery reads
# each generator's own signature (whether it takes ``input_output_aliases``).
_ATTRIBUTE = 'eventjax_wraps'


def link(outer: Callable, inner: Callable, role: str) -> Callable:
    """Record that ``outer`` wraps ``inner`` as ``role``; returns ``outer``.

    Example:
        >>> def kg(outs): return lambda x: (x,)
        >>> outer = link(lambda **p: kg(**p), kg, 'an example wrap')
        >>> [role for _, role in chain(outer)]
        ['an example wrap', 'the kernel generator']
    """
    if outer is not inner:
        try:
            setattr(outer, _ATTRIBUTE, (inner, role))
        except (AttributeError, TypeError):  # an object that takes no attributes: the chain ends there
            pass
    return outer


def chain(generator: Callable) -> list[tuple[Callable, str]]:
    """``(function, role)`` for ``generator`` and each generator it wraps, outermost first."""
    out, seen = [], set()
    while id(generator) not in seen:
        seen.add(id(generator))
        record = getattr(generator, _ATTRIBUTE, None)
        if record is None:
            out.append((generator, 'the kernel generator'))
            break
        out.append((generator, record[1]))
        generator = record[0]
    return out


def where(fn: Callable) -> tuple[str, int]:
    """The file and first line of ``fn``'s definition (of its class for a callable object; ``('?', 0)`` unknown)."""
    target = inspect.unwrap(fn) if not inspect.isclass(fn) else fn
    code = getattr(target, '__code__', None)
    if code is not None:
        return code.co_filename, code.co_firstlineno
    try:
        source = type(target) if not (inspect.isfunction(target) or inspect.isclass(target)) else target
        return inspect.getsourcefile(source) or '?', inspect.getsourcelines(source)[1]
    except (OSError, TypeError):
        return '?', 0
