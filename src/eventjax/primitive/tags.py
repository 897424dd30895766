"""Finding primitives: tags, a high-level call function, and the registry of live primitives.

:class:`CallAndTags` is mixed into :class:`~eventjax.XLACustomKernel`:
``def_tags('csr', 'binary', 'mv')`` labels a primitive, ``def_call(fn)``
stores the user-facing function that prepares arguments and binds it, and
``call(...)`` runs that function. :func:`get_registry`,
:func:`get_primitives_by_tags` and :func:`get_all_primitive_names` list the
primitives alive in this process (the registry holds them weakly).
"""

from __future__ import annotations

import threading
import weakref
from collections.abc import Callable, Iterable

__all__ = ['CallAndTags', 'get_all_primitive_names', 'get_primitives_by_tags', 'get_registry', 'operator_tags',
           'register']


class _Registry:
    """The live primitives, in creation order; the tuple is replaced under the lock, never mutated."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.refs: tuple[weakref.ref, ...] = ()


_REGISTRY = _Registry()


def register(kernel, doc: str | None = None) -> None:
    """Record a new primitive (called by ``XLACustomKernel.__init__``); ``doc`` becomes its ``__doc__``."""
    if doc is not None:
        if not isinstance(doc, str):
            raise TypeError(f'XLACustomKernel({kernel.name!r}): doc must be a string, got {type(doc).__name__}.')
        kernel.__doc__ = doc
    with _REGISTRY.lock:
        _REGISTRY.refs = tuple(r for r in _REGISTRY.refs if r() is not None) + (weakref.ref(kernel),)


def get_registry() -> dict:
    """Every live primitive by name (a repeated name gets ``#<n>``, as in :func:`eventjax.primitives`).

    Example:
        >>> import eventjax as ej
        >>> ej.get_registry()['binary_csrmv'].available_backends('cpu')[0]
        'jax'
    """
    out: dict = {}
    for ref in _REGISTRY.refs:
        kernel = ref()
        if kernel is not None:
            out[kernel.name if kernel.name not in out else f'{kernel.name}#{kernel._uid}'] = kernel
    return out


def get_primitives_by_tags(tags: Iterable[str]) -> dict:
    """The live primitives that carry every tag in ``tags``, by name.

    Example:
        >>> import eventjax as ej
        >>> sorted(ej.get_primitives_by_tags({'csr', 'binary'}))
        ['binary_csrmm', 'binary_csrmv']
    """
    if isinstance(tags, str):
        tags = {tags}  # a single tag, not its letters
    wanted = frozenset(tags)
    return {name: k for name, k in get_registry().items() if wanted <= k.tags}


def get_all_primitive_names() -> list[str]:
    """The sorted names of the live primitives.

    Example:
        >>> import eventjax as ej
        >>> 'csrmv' in ej.get_all_primitive_names()
        True
    """
    return sorted(get_registry())


def operator_tags(name: str) -> tuple[str, ...]:
    """The tags of a standard operator from its name: format, value type, product.

    Example:
        >>> operator_tags('binary_fcnmv')
        ('fcn', 'binary', 'mv')
    """
    family = next((f for f in ('dense', 'csr', 'fcn') if f in name), 'other')
    kind = 'binary' if name.startswith('binary_') else 'float'
    return (family, kind, name[-2:]) if name[-2:] in ('mv', 'mm') else (family, kind)


class CallAndTags:
    """``def_call``/``call`` and ``def_tags``/``tags`` for a primitive."""

    _call_fn: Callable | None = None
    _tags: frozenset[str] = frozenset()

    def def_call(self, fn: Callable) -> None:
        """Store ``fn``, the user-facing function that prepares arguments and binds this primitive.

        Example:
            >>> import eventjax as ej
            >>> p = ej.XLACustomKernel('def_call_example')
            >>> p.def_call(lambda x: x + 1)
            >>> p.call(1)
            2
        """
        if not callable(fn):
            raise TypeError(f'{self.name}.def_call(): fn must be callable, got {type(fn).__name__}.')
        self._call_fn = fn

    def call(self, *args, **kwargs):
        """Run the function stored by :meth:`def_call` with these arguments."""
        if self._call_fn is None:
            raise ValueError(f'{self.name}.call(): no call function is stored; register one with '
                             f'{self.name}.def_call(fn), or call the primitive itself with outs=.')
        return self._call_fn(*args, **kwargs)

    def def_tags(self, *tags: str) -> None:
        """Replace this primitive's tags (e.g. ``'csr', 'binary', 'mv'``) used by :func:`get_primitives_by_tags`.

        Example:
            >>> import eventjax as ej
            >>> p = ej.XLACustomKernel('def_tags_example')
            >>> p.def_tags('toy', 'cpu-only')
            >>> sorted(p.tags)
            ['cpu-only', 'toy']
        """
        bad = [t for t in tags if not isinstance(t, str) or not t]
        if bad:
            raise TypeError(f'{self.name}.def_tags(): every tag must be a non-empty string, got {bad[0]!r}.')
        self._tags = frozenset(tags)

    @property
    def tags(self) -> frozenset[str]:
        """The tags set by :meth:`def_tags`."""
        return self._tags
