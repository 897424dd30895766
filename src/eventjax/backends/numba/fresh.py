"""Fresh copies of a kernel and of the njit functions it calls, compiled only for the values they read now.

numba compiles an njit function once per signature and freezes the globals
and closure values it reads at that moment. A handler compiled later links
that code, even when the values changed since: a helper that read
``SCALE = 2`` at its first call keeps returning twice its input after
``SCALE = 3``, and a handler keyed by the new value would serve the old code
(in this process, and from the disk cache in every later one).

So a handler never calls the user's dispatchers themselves. It calls copies
made from their Python functions, whose globals and closure cells are
snapshots of the values the fingerprint describes, and whose own callees are
copies too. A callee's copy is shared by every handler that sees the same
fingerprint for it (compiled once per process).

Every copy carries a name of its own. numba names compiled code after the
function's qualified name and a per-process counter, so two kernels of one
factory (closures over different constants) compiled in separate processes
can carry the same symbol, and a process that loads both handlers from the
disk cache resolves both to whichever it loaded first (one plasticity
bound's kernel once ran for another). A kernel's copy is named after its
handler's digest, a callee's after its fingerprint.

``@numba.vectorize`` functions and ``@overload`` implementations are not
copied: numba compiles them once per process. When a value one of them
reads has changed since a handler first linked it, the copy is marked
unsettled and its handler is kept out of the disk cache.
"""

from __future__ import annotations

import hashlib
import threading
import types
from typing import Any

import numba

from eventjax.backends.numba import keying

__all__ = ['fresh_kernel']

_lock = threading.Lock()
_copies: dict[str, Any] = {}  # a callee's fingerprint digest -> its copy; lives as long as the handlers
_first: dict[int, tuple[Any, tuple | None]] = {}  # id -> (ufunc or stub, its fingerprint when first linked)


def fresh_kernel(kernel: Any, suffix: str) -> tuple[Any, bool]:
    """``(copy, settled)``: the njit ``kernel`` copied as ``<qualname>__<suffix>``, calling copies of its callees.

    ``settled`` is False when a ``@vectorize`` function or ``@overload``
    the copies call reads values that changed since a handler first linked
    it: numba's compiled code for it may be stale, so the handler must not
    be cached on disk.

    Args:
        kernel: the user's ``@numba.njit`` kernel, with a fingerprint.
        suffix: what makes the copy's name unique (the handler's digest).

    Example:
        >>> import numba
        >>> copy, settled = fresh_kernel(numba.njit(lambda x, out: None), 'abc')
        >>> copy.py_func.__qualname__, settled
        ('<lambda>__abc', True)
    """
    copier = _Copier()
    return copier.dispatcher(kernel, suffix), copier.settled


def _unchanged(v: Any) -> bool:
    fingerprint = keying.kernel_fingerprint(v)
    with _lock:
        first = _first.setdefault(id(v), (v, fingerprint))[1]
    return fingerprint is not None and fingerprint == first


def _compiled_once(v: Any) -> bool:
    """Whether numba compiles ``v`` once per process, where a copy cannot reach: a user's ufunc or overload."""
    if isinstance(v, types.FunctionType):
        return bool(keying.overloads(v))
    py_func = getattr(getattr(v, '_dispatcher', None), 'py_func', None)
    return (hasattr(v, 'ufunc') and py_func is not None
            and getattr(py_func, '__module__', '').partition('.')[0] not in keying.LIBRARIES)


def _is_user_dispatcher(v: Any) -> bool:
    return (isinstance(v, numba.core.registry.CPUDispatcher)
            and getattr(v.py_func, '__module__', '').partition('.')[0] not in keying.LIBRARIES)


class _Copier:
    """One copying walk; a function met twice (recursion) gets one copy."""

    def __init__(self) -> None:
        self.settled = True
        self._made: dict[int, Any] = {}
        self._keep: list[Any] = []  # keeps ids in _made valid during the walk

    def dispatcher(self, d: Any, suffix: str | None = None) -> Any:
        if id(d) in self._made:
            return self._made[id(d)]
        digest = None
        if suffix is None:
            fingerprint = keying.kernel_fingerprint(d)
            if fingerprint is None:
                return d  # its values have no description: the kernel is keyed by identity anyway
            digest = hashlib.sha256(repr(fingerprint).encode()).hexdigest()[:16]
            with _lock:
                if digest in _copies:
                    return _copies[digest]
            suffix = digest
        fn = d.py_func
        glb: dict[str, Any] = {}
        cells = tuple(types.CellType() for _ in fn.__code__.co_freevars)
        copy = types.FunctionType(fn.__code__, glb, fn.__name__, fn.__defaults__, cells or None)
        copy.__kwdefaults__, copy.__module__ = fn.__kwdefaults__, fn.__module__
        copy.__qualname__ = f'{fn.__qualname__}__{suffix}'
        # numba's own cache of a callee knows nothing of the values it froze; the handler's cache covers it.
        options = {k: v for k, v in d.targetoptions.items() if k not in ('nopython', 'cache')}
        made = numba.njit(**{'locals': dict(d.locals), **options})(copy)
        self._made[id(d)] = made
        self._keep.append(d)
        # Filled only now, so that a recursive call finds the copy itself.
        glb.update(fn.__globals__)
        reads: dict[tuple[str, str], set[str]] = {}
        for kind, name, attrs in _all_reads(fn.__code__):
            reads.setdefault((kind, name), set()).update(attrs[:1])
        for name in glb.keys() & {name for kind, name in reads if kind == 'global'}:
            glb[name] = self.value(glb[name], reads[('global', name)])
        for name, cell, old in zip(fn.__code__.co_freevars, cells, fn.__closure__ or ()):
            try:
                cell.cell_contents = self.value(old.cell_contents, reads.get(('cell', name), set()))
            except ValueError:  # an empty cell stays empty
                pass
        if digest is not None:
            with _lock:
                made = _copies.setdefault(digest, made)
        return made

    def value(self, v: Any, attrs: set[str] = frozenset()) -> Any:
        """``v`` as a copy reads it; ``attrs``: the attributes read from it (of a module)."""
        if _is_user_dispatcher(v):
            return self.dispatcher(v)
        if _compiled_once(v):
            self.settled = self.settled and _unchanged(v)
            return v
        if type(v) is tuple:
            return tuple(self.value(x) for x in v)
        if isinstance(v, types.ModuleType) and attrs and v.__name__.partition('.')[0] not in keying.LIBRARIES:
            return self._module(v, attrs)
        return v

    def _module(self, m: types.ModuleType, attrs: set[str]) -> types.ModuleType:
        # `mod.helper` in a kernel: numba resolves the attribute on the module
        # object, so the copy reads a stand-in whose dispatchers are copies.
        for a in attrs:
            self.value(getattr(m, a, None))  # an overloaded stub or a ufunc read as mod.f: only checked
        swapped = {a: getattr(m, a) for a in sorted(attrs) if _is_user_dispatcher(getattr(m, a, None))}
        if not swapped:
            return m
        stand_in = types.ModuleType(m.__name__, m.__doc__)
        vars(stand_in).update(vars(m))
        vars(stand_in).update({a: self.dispatcher(d) for a, d in swapped.items()})
        return stand_in


def _all_reads(code: types.CodeType):
    yield from keying.code_reads(code)
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _all_reads(c)

