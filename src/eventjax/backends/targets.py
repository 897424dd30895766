"""The registry of FFI targets a bridge has registered: written under a lock, read without one.

XLA keeps raw pointers into what a target was registered from (a numba
cfunc, a loaded library), so entries live for the life of the process.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

__all__ = ['TargetRegistry']

T = TypeVar('T')


class TargetRegistry(Generic[T]):
    """Targets by key; ``get_or_create`` builds each one once, however many threads ask.

    Example:
        >>> r = TargetRegistry()
        >>> r.get_or_create('k', lambda index: f'target_{index}')
        'target_0'
        >>> len(r)
        1
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._targets: dict[Hashable, T] = {}

    def __len__(self) -> int:
        return len(self._targets)

    def get_or_create(self, key: Hashable, create: Callable[[int], T]) -> T:
        """The target of ``key``, made by ``create(index)`` (index: how many came before) the first time."""
        target = self._targets.get(key)
        if target is not None:
            return target
        with self._lock:
            target = self._targets.get(key)
            if target is None:
                target = create(len(self._targets))
                # Replace, never mutate: a lock-free reader sees the old dict or the new one.
                self._targets = {**self._targets, key: target}
        return target
