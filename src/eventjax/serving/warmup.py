"""Compile served functions ahead of the first request, and for the next configuration before switching.

``jax.jit(f).lower(*args).compile()`` fills JAX's caches for the *current*
configuration only: eventjax puts its configuration's key into the jit
cache key, so a :func:`eventjax.set_backend` to a configuration never
compiled turns every served shape into a cache miss, and the next request
pays the whole compile. A :class:`Warmup` remembers what was served
(function, example arguments, backends) and compiles it all for the next
configuration *before* switching to it (:meth:`Warmup.prepare`, in the
background if wanted; :meth:`Warmup.set_backend` does both steps), so a
backend change made by an operator costs the requests that follow it no
compile. Going back to a configuration compiled before compiles nothing.
"""

from __future__ import annotations

import concurrent.futures
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import attrs
import jax
import jax.numpy as jnp

from eventjax import config

__all__ = ['Warmup', 'WarmupEntry']


def _example(arg: Any) -> Any:
    """An argument to call with: zeros for a ``jax.ShapeDtypeStruct``, the value itself otherwise."""
    if isinstance(arg, jax.ShapeDtypeStruct):
        return jnp.zeros(arg.shape, arg.dtype)
    return arg


@attrs.frozen
class WarmupEntry:
    """One served call: ``fn(*args, backend=b)`` for each ``b`` in ``backends`` (None: no ``backend=``)."""

    name: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    backends: tuple[str | None, ...]


class Warmup:
    """A registry of served calls that compiles them all on demand.

    Each entry is run once per backend with example arguments (zeros for a
    ``jax.ShapeDtypeStruct``), exactly as a request will call it, so both
    JAX's compile cache and its C++ dispatch cache hold it afterwards.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> import eventjax as ej
        >>> from eventjax.serving import Warmup
        >>> f = jax.jit(lambda x, backend=None: 2 * x, static_argnames='backend')
        >>> warm = Warmup()
        >>> warm.add('double', f, jax.ShapeDtypeStruct((4,), jnp.float32), backends=[None])
        >>> sorted(warm.run())
        ['double[default]']
    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._entries: tuple[WarmupEntry, ...] = ()

    @property
    def entries(self) -> tuple[WarmupEntry, ...]:
        return self._entries

    def add(self, name: str, fn: Callable[..., Any], *args: Any,
            backends: Iterable[str | None] = (None,)) -> None:
        """Register ``fn(*args, backend=b)`` for every ``b`` in ``backends`` (one name alone may be a string)."""
        backends = (backends,) if isinstance(backends, str) else tuple(backends)
        wrong = [b for b in backends if b is not None and not isinstance(b, str)]
        if wrong:
            raise TypeError(f'Warmup.add({name!r}): backends must be names or None, got {wrong[0]!r}.')
        if not backends:
            raise ValueError(f'Warmup.add({name!r}): backends is empty; pass at least one, e.g. [None].')
        with self._lock:
            self._entries = (*self._entries, WarmupEntry(name, fn, tuple(args), backends))

    def run(self, entries: Sequence[WarmupEntry] | None = None) -> dict[str, float]:
        """Call every entry once per backend; return the seconds each took, keyed ``name[backend]``."""
        timings = {}
        for entry in self._entries if entries is None else entries:
            args = [_example(a) for a in entry.args]
            for backend in entry.backends:
                start = time.perf_counter()
                kwargs = {} if backend is None else {'backend': backend}
                jax.block_until_ready(entry.fn(*args, **kwargs))
                timings[f'{entry.name}[{backend or "default"}]'] = time.perf_counter() - start
        return timings

    def prepare(self, platform: str, backend: str | None, *,
                background: bool = False) -> dict[str, float] | concurrent.futures.Future:
        """Compile every entry for the configuration ``set_backend(platform, backend)`` would make, without switching.

        The calling thread (or, with ``background=True``, a new daemon
        thread) compiles under that configuration while every other thread
        keeps serving the current one; a later :func:`eventjax.set_backend`
        to it then finds everything compiled. Returns :meth:`run`'s timings,
        or a ``concurrent.futures.Future`` of them with ``background=True``.

        Example:
            >>> import jax, jax.numpy as jnp
            >>> import eventjax as ej
            >>> from eventjax.serving import Warmup
            >>> warm = Warmup()
            >>> warm.add('double', jax.jit(lambda x: 2 * x), jax.ShapeDtypeStruct((4,), jnp.float32))
            >>> done = warm.prepare('cpu', 'jax', background=True)
            >>> sorted(done.result(timeout=60))
            ['double[default]']
            >>> ej.set_backend('cpu', 'jax')  # compiles nothing now
            >>> ej.set_backend('cpu', None)
        """
        snap = config.prepare_backend(platform, backend)

        def work() -> dict[str, float]:
            with config.warming(snap):
                return self.run()

        if not background:
            return work()
        future: concurrent.futures.Future = concurrent.futures.Future()

        def target() -> None:
            if future.set_running_or_notify_cancel():
                try:
                    future.set_result(work())
                except BaseException as exc:  # handed to whoever waits on the future
                    future.set_exception(exc)

        threading.Thread(target=target, name=f'eventjax-warmup-{platform}-{backend}', daemon=True).start()
        return future

    def set_backend(self, platform: str, backend: str | None) -> dict[str, float]:
        """Compile every entry for ``set_backend(platform, backend)`` (:meth:`prepare`), then switch to it.

        Requests served meanwhile keep running the current configuration,
        and none pays a compile after the switch. Changes are serialized, so
        two operators flipping at once each leave a warm cache. Setting the
        current backend again compiles nothing and returns ``{}``; going
        back to a configuration compiled before returns fast timings.
        """
        with self._lock:
            if config.prepare_backend(platform, backend) is config.snapshot():
                return {}
            timings = self.prepare(platform, backend)
            config.set_backend(platform, backend)
            return timings
