"""The configuration's public setters: the global backend per platform, its preparation, the thread's override.

Each builds a change of the current snapshot and hands it to the runtime's
core (:func:`eventjax.config.runtime.update`, ``prepare``, the override's
user context), which publishes it; a backend name no bridge serves warns
once with what the bridges say about it (:func:`register_backend_catalog`).
"""

from __future__ import annotations

import contextlib
import warnings
from collections.abc import Callable, Iterator, Mapping

import attrs

from eventjax.config.runtime import _OVERRIDE_KEY, _STATE, current_override, prepare, update
from eventjax.config.snapshot import (
    PLATFORMS,
    ConfigSnapshot,
    check_backend_name,
    frozen_map,
    normalize_platform,
    register_backend_aliases,
)
from eventjax.config.tasks import refuse_inside_task
from eventjax.errors import UnknownBackendWarning

__all__ = ['clear_backends', 'get_backend', 'override', 'prepare_backend', 'register_backend_catalog', 'set_backend']


def prepare_backend(platform: str, backend: str | None) -> ConfigSnapshot:
    """The snapshot :func:`set_backend` ``(platform, backend)`` would publish, its key reserved.

    Example:
        >>> import eventjax as ej
        >>> nxt = ej.config.prepare_backend('gpu', 'warp')
        >>> nxt.backends['gpu'], ej.get_backend('gpu') is None
        ('warp', True)
    """
    platform = normalize_platform(platform, who='prepare_backend()')
    backend = check_backend_name(backend, who='prepare_backend()')
    return prepare(_backend_change(platform, backend, 'prepare_backend'))


def register_backend_catalog(catalog: Callable[[str], tuple[str, ...]],
                             explain: Callable[[str, str], str], *, aliases: Mapping[str, str] | None = None) -> None:
    """Tell the runtime which backend names exist, so a typo in a name can be caught.

    Called once by :mod:`eventjax.backends` at import: the configuration
    layer lists no backends itself. ``catalog(platform)`` returns the names
    the bridges serve on that platform; ``explain(platform, backend)`` says
    why a name is not served there (and how to fix it), or ''; ``aliases``
    maps each other name a bridge answers to onto the bridge's name
    (:func:`~eventjax.config.normalize_backend` applies it).

    Example:
        >>> from eventjax.config import setters
        >>> callable(setters.register_backend_catalog)
        True
    """
    with _STATE.lock:
        _STATE.catalog, _STATE.explain = catalog, explain
        register_backend_aliases(aliases or {})


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
    update(_backend_change(platform, backend, 'set_backend'))


def _backend_change(platform: str, backend: str | None, who: str) -> Callable[[ConfigSnapshot], ConfigSnapshot]:
    def change(snap: ConfigSnapshot) -> ConfigSnapshot:
        if snap.backends[platform] == backend:
            return snap
        if backend is not None:
            _warn_if_unknown(snap, platform, backend, f'{who}({platform!r}, {backend!r})', stacklevel=5)
        backends = dict(snap.backends)
        backends[platform] = backend
        return attrs.evolve(snap, backends=frozen_map(backends))

    return change


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
