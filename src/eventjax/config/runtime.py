"""The configuration runtime: one lock, one current snapshot, and the jit key.

Writers take ``_STATE.lock``, build a new :class:`ConfigSnapshot` with
``attrs.evolve``, bump its version and publish it with one reference
assignment. Readers take no lock: they read ``_STATE.snapshot`` once and use
only that object.

JAX learns about changes through two user contexts (``jax.make_user_context``)
that are part of the key of its jit caches: one holds the global version, the
other the calling thread's override. A change therefore turns into a cache
miss on the next call of every jitted function, in every thread, instead of a
process-wide flush of JAX's caches. The snapshot is published *before* the version context
is updated, so a call that sees the new key also sees the new snapshot; a
racing trace can at worst fill an entry under the old key, which is never
looked up again because versions only grow.
"""

from __future__ import annotations

import contextlib
import os
import threading
import warnings
from collections.abc import Callable, Iterator

import attrs
import jax

from eventjax.config.snapshot import (
    PLATFORMS,
    ConfigSnapshot,
    check_backend_name,
    frozen_map,
    normalize_platform,
)
from eventjax.config.tasks import refuse_inside_task
from eventjax.errors import UnknownBackendWarning

__all__ = [
    'clear_backends',
    'current_override',
    'get_backend',
    'get_pallas_cpu_interpret',
    'override',
    'register_backend_catalog',
    'set_backend',
    'set_pallas_cpu_interpret',
    'snapshot',
    'update',
]

def _env_flag(name: str, default: bool) -> bool:
    raw = os.environ.get(name, '').strip().lower()
    if raw == '':
        return default
    if raw in ('1', 'true', 'yes', 'on'):
        return True
    if raw in ('0', 'false', 'no', 'off'):
        return False
    raise ValueError(f'{name}={raw!r} is not a boolean; use 1/true/yes/on or 0/false/no/off.')


class _State:
    """Holder of the process-wide state; its attributes change only under ``lock``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.snapshot = ConfigSnapshot(
            pallas_cpu_interpret=_env_flag('EVENTJAX_PALLAS_INTERPRET', False),
        )
        self.warned: frozenset[tuple[str, str]] = frozenset()
        # Told by the backends layer at import (config lists no backends):
        # catalog(platform) -> the names eventjax's bridges serve there;
        # explain(platform, backend) -> a sentence on why a name is not served.
        self.catalog: Callable[[str], tuple[str, ...]] = lambda platform: ()
        self.explain: Callable[[str, str], str] = lambda platform, backend: ''


_STATE = _State()
_VERSION_KEY = jax.make_user_context(0)
_OVERRIDE_KEY = jax.make_user_context(())


def snapshot() -> ConfigSnapshot:
    """Return the current configuration snapshot (frozen; never changes).

    Example:
        >>> import eventjax as ej
        >>> snap = ej.config.snapshot()
        >>> isinstance(snap.version, int)
        True
    """
    return _STATE.snapshot


def update(change: Callable[[ConfigSnapshot], ConfigSnapshot]) -> ConfigSnapshot:
    """Apply ``change`` to the current snapshot under the lock and publish it.

    ``change`` gets the current snapshot and returns either the same object
    (nothing changes, the version stays) or a new one, whose version is set
    to the old version + 1. Returns the snapshot current afterwards.
    """
    with _STATE.lock:
        old = _STATE.snapshot
        new = change(old)
        if new is old:
            return old
        new = attrs.evolve(new, version=old.version + 1)
        _STATE.snapshot = new
        _VERSION_KEY.set_global(new.version)
        return new


def register_backend_catalog(catalog: Callable[[str], tuple[str, ...]],
                             explain: Callable[[str, str], str]) -> None:
    """Tell the runtime which backend names exist, so a typo in a name can be caught.

    Called once by :mod:`eventjax.backends` at import: the configuration
    layer lists no backends itself. ``catalog(platform)`` returns the names
    the bridges serve on that platform; ``explain(platform, backend)`` says
    why a name is not served there (and how to fix it), or ''.

    Example:
        >>> from eventjax.config import runtime
        >>> callable(runtime.register_backend_catalog)
        True
    """
    with _STATE.lock:
        _STATE.catalog, _STATE.explain = catalog, explain


def _is_known(snap: ConfigSnapshot, platform: str, backend: str) -> bool:
    # Cheapest test first: override() asks on every entry.
    return (backend in _STATE.catalog(platform) or (platform, backend) in _STATE.warned
            or backend in snap.known_backends(platform))


def _warn_if_unknown(snap: ConfigSnapshot, platform: str, backend: str, who: str, stacklevel: int) -> None:
    # Called with _STATE.lock held: it records what it warned about.
    if _is_known(snap, platform, backend):
        return
    known = set(snap.known_backends(platform)) | set(_STATE.catalog(platform))
    _STATE.warned = _STATE.warned | {(platform, backend)}
    why = _STATE.explain(platform, backend)
    warnings.warn(
        f'{who}: no registered primitive has a {backend!r} kernel for {platform!r}, so it will be '
        f'skipped everywhere and each primitive keeps its own default.{" " + why if why else ""} '
        f'Known backends for {platform!r}: {", ".join(sorted(known)) or "none"}.',
        UnknownBackendWarning,
        stacklevel=stacklevel,
    )


def set_backend(platform: str, backend: str | None) -> None:
    """Set the global default backend for a platform across all primitives.

    Every primitive with a kernel for ``backend`` on ``platform`` uses it,
    unless a call passes ``backend=`` or the thread is inside an
    :func:`override`. Primitives without that backend keep their own default.
    Already-compiled call sites pick the change up on their next call, in
    every thread. Setting the current value again is a no-op.

    Args:
        platform: 'cpu', 'gpu' or 'tpu' ('cuda' and 'rocm' mean 'gpu').
        backend: a backend name such as 'numba', 'warp', 'pallas' or 'jax';
            None clears the platform's global backend.

    Raises:
        ValueError: ``backend`` is an empty string, or the platform is unknown.
        TypeError: ``backend`` is neither a string nor None.

    Example:
        >>> import eventjax as ej
        >>> ej.set_backend('gpu', 'warp')
        >>> ej.get_backend('gpu')
        'warp'
        >>> ej.set_backend('gpu', None)
    """
    platform = normalize_platform(platform, who='set_backend()')
    backend = check_backend_name(backend, who='set_backend()')

    def change(snap: ConfigSnapshot) -> ConfigSnapshot:
        if snap.backends[platform] == backend:
            return snap
        if backend is not None:
            _warn_if_unknown(snap, platform, backend, f'set_backend({platform!r}, {backend!r})', stacklevel=5)
        backends = dict(snap.backends)
        backends[platform] = backend
        return attrs.evolve(snap, backends=frozen_map(backends))

    update(change)


def get_backend(platform: str) -> str | None:
    """Return the global backend set for ``platform``, or None.

    Example:
        >>> import eventjax as ej
        >>> ej.get_backend('tpu') is None
        True
    """
    return _STATE.snapshot.backends[normalize_platform(platform, who='get_backend()')]


def clear_backends() -> None:
    """Clear the global backend of every platform (a no-op if none is set).

    Example:
        >>> import eventjax as ej
        >>> ej.clear_backends()
        >>> ej.get_backend('cpu') is None
        True
    """

    def change(snap: ConfigSnapshot) -> ConfigSnapshot:
        if all(b is None for b in snap.backends.values()):
            return snap
        return attrs.evolve(snap, backends=frozen_map((p, None) for p in PLATFORMS))

    update(change)


def current_override() -> tuple[tuple[str, str], ...]:
    """The calling thread's active override as sorted ``(platform, backend)`` pairs.

    Inside a coroutine task this is the override the loop's thread was
    entered with before the loop started (tasks cannot enter their own).

    Example:
        >>> import eventjax as ej
        >>> ej.config.current_override()
        ()
    """
    return _OVERRIDE_KEY.value


@contextlib.contextmanager
def override(**platform_backends: str | None) -> Iterator[None]:
    """Override the global backend for the calling thread only.

    Overrides nest: an inner override adds to (or, with None, removes from)
    the outer one, and leaving it restores the outer one. Other threads never
    see it. Entering the same override again reuses compiled code.

    An override cannot be entered inside an asyncio (or trio) task: every
    task of a loop shares its thread, so the others would run this one's
    backends while it awaits. There, pass ``backend=`` per call, or run the
    block in a worker thread with ``asyncio.to_thread``.

    Args:
        **platform_backends: ``cpu=``, ``gpu=``, ``tpu=`` (or ``cuda=``,
            ``rocm=``) backend names; None removes that platform from the
            override so the global backend applies again.

    Raises:
        OverrideInTaskError: called inside a coroutine task.

    Example:
        >>> import eventjax as ej
        >>> with ej.config.override(cpu='jax'):
        ...     pass
    """
    refuse_inside_task('override()')
    merged = dict(current_override())
    for platform, backend in platform_backends.items():
        name = normalize_platform(platform, who='override()')
        backend = check_backend_name(backend, who='override()')
        if backend is None:
            merged.pop(name, None)
        else:
            if not _is_known(_STATE.snapshot, name, backend):
                with _STATE.lock:
                    _warn_if_unknown(_STATE.snapshot, name, backend, f'override({platform}={backend!r})', stacklevel=4)
            merged[name] = backend
    with _OVERRIDE_KEY(tuple(sorted(merged.items()))):
        yield


def set_pallas_cpu_interpret(enabled: bool) -> None:
    """Choose whether pallas kernels registered from now on also run on the cpu, interpreted.

    Interpret mode is slow and meant for tests on machines without a GPU, so
    it is off unless the environment variable ``EVENTJAX_PALLAS_INTERPRET``
    is ``1``/``true``/``yes``/``on`` at import or this is called.

    Example:
        >>> import eventjax as ej
        >>> ej.config.set_pallas_cpu_interpret(True)
    """
    if not isinstance(enabled, bool):
        raise TypeError(f'set_pallas_cpu_interpret(): enabled must be a bool, got {enabled!r}.')
    update(lambda s: s if s.pallas_cpu_interpret == enabled else attrs.evolve(s, pallas_cpu_interpret=enabled))


def get_pallas_cpu_interpret() -> bool:
    """Whether pallas kernels are registered for the cpu in interpret mode."""
    return _STATE.snapshot.pallas_cpu_interpret
