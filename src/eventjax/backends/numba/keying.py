"""Fingerprints of numba kernels: everything a compiled handler embeds, by value.

A handler compiles the user's kernel into itself, and numba freezes what the
kernel reads from its closure and its globals (arrays included) into the
machine code as constants. So a handler may serve, in memory or from numba's
disk cache, only a kernel with the same fingerprint: the same bytecode, numba
options and defaults, and the same value of every closure cell and global it
reads, followed through the njit functions, ``@numba.vectorize`` and
``@numba.guvectorize`` functions and plain Python functions it calls, the
implementations numba links in their place (every ``@overload`` registered
for a function, the typing function of an ``@intrinsic``), and the
attributes it reads from the user's modules (held in a global or a closure
cell). Options count in full, ``locals=`` type declarations included. Arrays
count by dtype, shape, layout and bytes, so two closures over different
arrays never share a handler, and neither do two processes whose
module-level arrays differ.

A value that cannot be described by value (an instance of an unknown class,
a jitclass, a typed list) makes the kernel unfingerprintable: the bridge then
keys it by identity in memory and never caches its handler on disk. A kernel
that reaches a function again while describing it (recursion) has a
fingerprint but is not portable: numba's disk cache cannot reload a handler
that links a recursive function.

The fingerprint is built from plain data only (no addresses), so its
``repr`` is the same in every process and can name a disk cache entry.
"""

from __future__ import annotations

import builtins
import dis
import enum
import functools
import hashlib
import sys
import types
from typing import Any

import numpy as np

__all__ = ['LIBRARIES', 'code_reads', 'describe_kernel', 'kernel_fingerprint', 'overloads']

# Packages whose objects a kernel refers to by name: their meaning is fixed
# by their version, which the disk cache key carries (see ``codegen``).
LIBRARIES = frozenset({'numpy', 'numba', 'llvmlite', 'scipy'}) | frozenset(sys.stdlib_module_names)
_SCALARS = (type(None), bool, int, float, complex, str, bytes, type(Ellipsis))
_READS = frozenset({'LOAD_ATTR', 'LOAD_METHOD'})
_LOADS = {'LOAD_GLOBAL': 'global', 'LOAD_NAME': 'global', 'LOAD_DEREF': 'cell', 'LOAD_CLASSDEREF': 'cell'}


class _Unfingerprintable(Exception):
    """Raised inside the walk for a value that cannot be described by value."""


def kernel_fingerprint(kernel: Any) -> tuple | None:
    """The fingerprint of an ``@numba.njit`` kernel, or None when one of its values has none.

    Example:
        >>> import numba
        >>> f = numba.njit(lambda x, out: None)
        >>> kernel_fingerprint(f) == kernel_fingerprint(numba.njit(f.py_func))
        True
    """
    return describe_kernel(kernel)[0]


def describe_kernel(kernel: Any) -> tuple[tuple | None, bool]:
    """``(fingerprint or None, portable)``: portable when a handler compiled from it may be cached on disk.

    A kernel whose functions were made by ``exec`` in no importable module,
    or that calls a function recursively, has a fingerprint (it keys the
    handler in memory) but is not portable.

    Example:
        >>> import numba
        >>> describe_kernel(numba.njit(lambda x, out: None))[1]
        True
    """
    walk = _Walk()
    try:
        return walk.value(kernel), walk.portable
    except _Unfingerprintable:
        return None, False


def _top_package(obj: Any) -> str:
    module = obj.__module__ if isinstance(obj, (type, types.FunctionType, types.BuiltinFunctionType)) else None
    module = module or type(obj).__module__ or ''
    return module.partition('.')[0]


def _named(obj: Any) -> tuple[str, str] | None:
    """(module, qualified name) under which ``obj`` can be imported, or None."""
    module = getattr(obj, '__module__', None)
    name = getattr(obj, '__qualname__', None) or getattr(obj, '__name__', None)
    if not isinstance(module, str) or not isinstance(name, str):
        return None
    found = sys.modules.get(module)
    for part in name.split('.'):
        found = getattr(found, part, None)
    return (module, name) if found is obj else None


def _is_library(obj: Any) -> bool:
    # A function made by exec or in a notebook may claim a library module
    # ('builtins'); only one that can be imported under its name is trusted.
    return _top_package(obj) in LIBRARIES and _named(obj) is not None


@functools.lru_cache(maxsize=4096)
def code_reads(code: types.CodeType) -> tuple[tuple[str, str, tuple[str, ...]], ...]:
    """Each global or closure cell ``code`` loads ``(kind, name, attributes read from it right after)``.

    Example:
        >>> code_reads((lambda x: np.pi * x).__code__)
        (('global', 'np', ('pi',)),)
    """
    reads = []
    chain: list[str] | None = None
    for ins in dis.get_instructions(code):
        if ins.opname in _LOADS:
            chain = []
            reads.append((_LOADS[ins.opname], ins.argval, chain))
        elif ins.opname in _READS and chain is not None:
            chain.append(ins.argval)
        else:
            chain = None
    return tuple((kind, name, tuple(attrs)) for kind, name, attrs in reads)


def overloads(f: Any) -> tuple:
    """What numba compiles in place of ``f``: each ``@overload`` registered for it, with its jit options.

    A function given to ``@overload`` is a stub whose body never runs; the
    code linked into a handler is the overload's.

    Example:
        >>> overloads(lambda x: x)
        ()
    """
    from numba.core.typing.templates import builtin_registry

    # numba's typing registry only grows: its length names its contents.
    return _overload_table(len(builtin_registry.globals)).get(id(f), ())


@functools.lru_cache(maxsize=1)
def _overload_table(size: int) -> dict[int, tuple]:
    from numba.core.typing.templates import builtin_registry

    table: dict[int, list] = {}
    for func, fnty in list(builtin_registry.globals)[:size]:
        for template in getattr(fnty, 'templates', ()):
            impl = getattr(template, '_overload_func', None)
            if impl is not None:
                table.setdefault(id(func), []).append((impl, dict(getattr(template, '_jit_options', {}))))
    return {k: tuple(v) for k, v in table.items()}


class _Walk:
    """One fingerprinting walk; functions met twice are described once."""

    def __init__(self) -> None:
        self.portable = True  # every function can be re-imported in another process
        self._done: dict[int, tuple] = {}
        self._keep: list[Any] = []  # keeps ids in _done valid during the walk

    def value(self, v: Any) -> tuple:
        if isinstance(v, _SCALARS):
            return (type(v).__name__, repr(v))
        if isinstance(v, np.ndarray):
            return self._array(v)
        if isinstance(v, np.generic):
            return ('scalar', repr(v.dtype), v.tobytes())
        if isinstance(v, (tuple, list)):
            return (type(v).__module__, type(v).__qualname__, tuple(self.value(x) for x in v))
        if isinstance(v, dict):
            return ('dict', tuple(sorted((repr(k), self.value(x)) for k, x in v.items())))
        if isinstance(v, (set, frozenset)):  # e.g. fastmath={'reassoc', 'contract'}: one order in every process
            return (type(v).__name__, tuple(sorted((self.value(x) for x in v), key=repr)))
        if isinstance(v, enum.Enum):
            return ('enum', type(v).__module__, type(v).__qualname__, v.name, self.value(v.value))
        if hasattr(v, 'py_func') and hasattr(v, 'targetoptions'):
            return self._once(v, lambda: self._dispatcher('njit', v))
        if hasattr(v, '_dispatcher') and hasattr(v, 'ufunc') and hasattr(v._dispatcher, 'py_func'):
            # A DUFunc or GUFunc: numba compiles its Python function into
            # the caller, like an njit callee; its name says nothing of that code.
            return self._once(v, lambda: self._ufunc(v))
        if type(v).__name__ == '_Intrinsic' and hasattr(v, '_defn'):
            return ('intrinsic', self.value(v._defn))
        if isinstance(v, types.ModuleType):
            return ('module', v.__name__)
        if isinstance(v, types.FunctionType) and not _is_library(v):
            return self._once(v, lambda: self._function(v))
        if _top_package(v) in LIBRARIES:
            return self._library(v)
        if isinstance(v, type) and issubclass(v, enum.Enum):
            return ('enum class', v.__module__, v.__qualname__, tuple((m.name, self.value(m.value)) for m in v))
        raise _Unfingerprintable(v)

    def _once(self, obj: Any, describe) -> tuple:
        key = id(obj)
        if key in self._done:
            if self._done[key][0] == 'recursive':
                self.portable = False  # see the module docstring
            return self._done[key]
        # A recursive call meets this placeholder instead of looping.
        self._done[key] = ('recursive', getattr(obj, '__qualname__', ''))
        self._keep.append(obj)
        self._done[key] = found = describe()
        return found

    def _dispatcher(self, kind: str, d: Any) -> tuple:
        return (kind, self.value(d.targetoptions), self.value(dict(getattr(d, 'locals', None) or {})),
                self.value(d.py_func))

    def _ufunc(self, u: Any) -> tuple:
        return (
            'ufunc',
            type(u).__qualname__,
            self.value(getattr(u, 'identity', None)),
            self.value(getattr(u, 'signature', None) if type(u).__name__ == 'GUFunc' else None),
            self._dispatcher('kernel', u._dispatcher),
        )

    def _array(self, a: np.ndarray) -> tuple:
        if a.dtype.hasobject:
            raise _Unfingerprintable(a)
        layout = 'C' if a.flags.c_contiguous else 'F' if a.flags.f_contiguous else 'A'
        digest = hashlib.sha256(np.ascontiguousarray(a).reshape(-1).view(np.uint8).data).hexdigest()
        return ('ndarray', repr(a.dtype), a.shape, layout, digest)

    def _library(self, v: Any) -> tuple:
        named = _named(v)
        if named is not None:  # a function, class, ufunc or constant importable by name
            return ('library', type(v).__qualname__, *named)
        if isinstance(v, np.dtype) or type(v).__module__.startswith('numba.core.types'):
            return ('library', type(v).__qualname__, repr(v))  # the repr is the whole type
        # Other library objects (a typed list, a lock) have no faithful description.
        raise _Unfingerprintable(v)

    def _function(self, f: types.FunctionType) -> tuple:
        if f.__module__ not in sys.modules:
            # Code made by exec (a docs page, a notebook cell under another
            # name): numba re-imports a cached function's module when it loads
            # it in another process, which would fail there.
            self.portable = False
        cells, bound = [], {}
        for name, cell in zip(f.__code__.co_freevars, f.__closure__ or ()):
            try:
                bound[name] = cell.cell_contents
            except ValueError:  # an empty cell: the closure's variable is not bound yet
                cells.append(('empty cell',))
            else:
                cells.append(self.value(bound[name]))
        return (
            'function',
            f.__module__,
            f.__qualname__,
            self._code(f.__code__, f.__globals__, bound),
            tuple(cells),
            self.value(f.__defaults__),
            self.value(f.__kwdefaults__),
            tuple(self.value(impl) for impl in overloads(f)),
        )

    def _code(self, code: types.CodeType, glb: dict, cells: dict) -> tuple:
        consts = []
        for c in code.co_consts:
            if isinstance(c, types.CodeType):
                consts.append(self._code(c, glb, cells))
            elif isinstance(c, frozenset):
                consts.append(('frozenset', tuple(sorted(repr(x) for x in c))))
            else:
                consts.append(self.value(c))
        reads = tuple(
            (kind, name, attrs, self._global(glb, name, attrs) if kind == 'global' else self._cell(cells, name, attrs))
            for kind, name, attrs in code_reads(code)
        )
        return ('code', code.co_code, tuple(consts), code.co_names, code.co_varnames, code.co_freevars, reads)

    def _global(self, glb: dict, name: str, attrs: tuple[str, ...]) -> tuple:
        if name in glb:
            return self._follow(glb[name], attrs)
        if hasattr(builtins, name):
            return ('builtin', name)
        return ('missing', name)

    def _cell(self, cells: dict, name: str, attrs: tuple[str, ...]) -> tuple:
        # The cell's value itself is in the function's description; only the
        # attributes read from a module held in it need following here.
        return self._follow(cells[name], attrs) if attrs and name in cells else ()

    def _follow(self, v: Any, attrs: tuple[str, ...]) -> tuple:
        # numba freezes mod.x as the value of x: follow reads on the user's
        # modules; a library module is known by its name and version.
        path = []
        for attr in attrs:
            if not isinstance(v, types.ModuleType) or v.__name__.partition('.')[0] in LIBRARIES:
                break
            if not hasattr(v, attr):
                return ('missing attribute', v.__name__, attr)
            v = getattr(v, attr)
            path.append(attr)
        return (tuple(path), self.value(v))
