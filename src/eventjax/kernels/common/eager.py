"""Helpers of several JAX operations that run as one jitted program when called eagerly, with bounded memory.

Eagerly, each JAX operation of a helper would compile on every new shape
and dispatch on every call; :func:`one_program_when_eager` runs the helper
as one jitted program instead, and keeps the programs of its last
:data:`EAGER_PROGRAMS` argument signatures, so a long-lived process that
sees ever new shapes holds a bounded number of them.
"""

from __future__ import annotations

import collections
import functools
import threading

import jax
import numpy as np

__all__ = ['EAGER_PROGRAMS', 'is_concrete', 'one_program_when_eager']


def is_concrete(*xs) -> bool:
    """Whether every ``x`` has values now (not a tracer under ``jit``/``vmap``/``grad``)."""
    return not any(isinstance(x, jax.core.Tracer) for x in xs)


EAGER_PROGRAMS = 32
"""How many compiled programs each eager helper keeps (the least recently used beyond it are dropped)."""


def _signature(x):
    # What a jitted program is specialised on: an array's shape, dtype and weak type; a Python
    # scalar's type (it is traced, weakly typed).
    if hasattr(x, 'shape') and hasattr(x, 'dtype'):
        return tuple(x.shape), np.dtype(x.dtype).str, bool(getattr(x, 'weak_type', False))
    return type(x)


class _Programs:
    """One helper's jitted programs, one per argument signature, the least recently used dropped first.

    Each program jits a fresh function object, so dropping it here lets JAX's own caches (keyed
    weakly by the function) release its trace, lowering and executable too.
    """

    def __init__(self, f, static_argnums: tuple[int, ...], size: int) -> None:
        self._f, self._static, self.size = f, static_argnums, size
        self._lock = threading.Lock()
        self._table: collections.OrderedDict = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._table)

    def get(self, args):
        dynamic = [a for i, a in enumerate(args) if i not in self._static]
        leaves, tree = jax.tree.flatten(dynamic)
        key = (tuple(args[i] for i in self._static if i < len(args)), tree, tuple(map(_signature, leaves)))
        with self._lock:
            program = self._table.pop(key, None)
            if program is None:
                f = self._f
                program = jax.jit(functools.wraps(f)(lambda *a: f(*a)), static_argnums=self._static)
            self._table[key] = program
            while len(self._table) > self.size:
                self._table.popitem(last=False)
        return program


def one_program_when_eager(*static_argnums: int, max_programs: int = EAGER_PROGRAMS):
    """Decorator: a helper of several JAX operations runs as one jitted program when called eagerly.

    Eagerly, each of its operations would compile on every new shape (a first call pays for each)
    and dispatch on every call; traced (any argument a tracer) it runs as written, so the caller's
    program is the same as without the decorator. ``static_argnums``: the Python-valued arguments.
    The helper keeps the programs of its last ``max_programs`` argument signatures (shapes, dtypes
    and static values; :data:`EAGER_PROGRAMS` by default) and drops the least recently used, so a
    process that sees ever new shapes holds a bounded number of programs; ``helper.programs()``
    says how many it holds.

    Example:
        >>> import jax.numpy as jnp
        >>> @one_program_when_eager(1)
        ... def shifted(x, k):
        ...     return jnp.where(x > k, x - k, 0)
        >>> shifted(jnp.arange(4), 1)
        Array([0, 0, 1, 2], dtype=int32)
        >>> shifted.programs()
        1
    """
    if max_programs < 1:
        raise ValueError(f'one_program_when_eager(): max_programs must be at least 1, got {max_programs}.')

    def decorate(f):
        programs = _Programs(f, static_argnums, max_programs)

        @functools.wraps(f)
        def call(*args):
            return programs.get(args)(*args) if is_concrete(*args) else f(*args)

        call.programs = programs.__len__
        return call

    return decorate
