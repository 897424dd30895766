"""The configuration runtime: one lock, one current snapshot, and the jit key.

Writers take ``_STATE.lock``, build a new :class:`ConfigSnapshot` with
``attrs.evolve`` and publish it with one reference assignment. Readers of an
eager call take no lock: they read ``_STATE.snapshot`` once and use only that
object.

JAX learns about changes through two user contexts (``jax.make_user_context``)
that are part of the key of its jit caches: one holds the global
configuration's *key* (``snapshot.version``), the other the calling thread's
override. A change therefore turns into a cache miss on the next call of
every jitted function, in every thread, instead of a process-wide flush of
JAX's caches.

Keys name contents. A configuration that was current before gets its old
key, and its old snapshot object, back, so going A -> B -> A reuses every
executable compiled under A: no retrace, no recompile, no new memory. The
hard part is a trace that races a change. JAX computes a jit key from the
user context when a call starts, and the trace that follows reads the
snapshot later; if another thread changes A -> B in between, B's kernels are
traced and the executable is filed under A's key. With keys that only grow
that entry is never looked up again; with keys by content it would be found
the next time A is current, and would run B's backend. The rule that closes
the race:

* A bind inside a trace (not top level) reads the snapshot under the lock,
  and records in its thread the epoch (the count of published changes) it
  saw. A writer publishes under the same lock, so no change can fall between
  a traced bind's read and its bookkeeping.
* A trace that started under key ``k`` in thread ``X`` and reads a different
  snapshot must have seen ``k`` stop being current *after* ``X``'s previous
  traced bind (or its whole life, if it has none): a change made by ``X``
  itself outside a trace cannot fall inside one of ``X``'s traces, and an
  earlier traced bind of the same trace either read ``k`` -- so ``k`` was
  still current then -- or was itself such a bind. So a traced bind in ``X``
  that follows a change made by another thread (or inside a trace) since
  ``X``'s previous traced bind marks *dirty* every key that stopped being
  current since then.
* A dirty key is never current again: a configuration whose key is dirty
  gets a fresh key the next time it becomes current. Any executable filed
  under a key therefore holds the kernels of that key's content.

A serving process that compiled what it serves traces nothing, so its
changes reuse keys; a single thread that changes the configuration and
then calls reuses keys too. Only traces that race another thread's change
cost fresh keys, as every change did before. A cold switch (to a
configuration not compiled yet) while other threads call is such a race and
feeds itself: each caller's first trace after it dirties the key it left,
so flipping back and forth cold compiles on every flip; warming the next
configuration before switching (below) is what makes switches free.

Warming a configuration before switching to it (:func:`prepare` and
:func:`warming`) pins one thread to a not-yet-current snapshot: its binds
read that snapshot and its jit keys carry that snapshot's key (a thread-local
value of the same user context), so what it compiles is filed under the key
the switch will publish. Pinned binds read a snapshot that cannot change
under them, so they dirty nothing; a key reserved by :func:`prepare` was
never current, so no racing trace can have used it.

Binds evaluated with :func:`jax.ensure_compile_time_eval` inside a jitted
function look like top-level calls to eventjax; a change made by another
thread while such a block runs may be baked into that function's
executable for the configuration current when the call started.

Memory: eventjax keeps at most :func:`~eventjax.config.table.get_max_configurations` configurations
(default 64, environment variable ``EVENTJAX_MAX_CONFIGURATIONS``) with their
keys; one dropped from that table, or left dirty, gets a fresh key when it
comes back. JAX keeps executables under keys that are never current again
until its own caches' entry limits (thousands of entries per cache) evict
them; its public API offers no way to evict entries by key short of
flushing all of its caches, which this project never does (unsafe while
other threads dispatch, and it recompiles everything).
"""

from __future__ import annotations

import collections
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
from eventjax.config.tracing import top_level as _top_level
from eventjax.errors import UnknownBackendWarning

__all__ = [
    'Draft',
    'bind_snapshot',
    'clear_backends',
    'current_override',
    'drafting',
    'get_backend',
    'override',
    'prepare',
    'prepare_backend',
    'register_backend_catalog',
    'set_backend',
    'snapshot',
    'update',
    'warming',
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


def _env_count(name: str, default: int) -> int:
    raw = os.environ.get(name, '').strip()
    if raw == '':
        return default
    try:
        value = int(raw)
    except ValueError:
        value = 0
    if value < 2:
        raise ValueError(f'{name}={raw!r} is not a whole number of at least 2.')
    return value


class _Slot:
    """One configuration content: its key, its snapshot, and whether the key may be reused."""

    __slots__ = ('dirty', 'left', 'snapshot')

    def __init__(self, snap: ConfigSnapshot) -> None:
        self.snapshot = snap
        # The epoch at which this content stopped being current; None while it
        # is current or while it was only reserved by prepare() (never current).
        self.left: int | None = None
        self.dirty = False


# Writers that ever changed the configuration, by thread ident, are kept up to
# this many; the epochs of those dropped fold into one entry that counts as
# another thread for everyone.
_WRITERS_KEPT = 32
_FOLDED = 'folded'
_IN_TRACE = 'in a trace'


class _State:
    """Holder of the process-wide state; its attributes change only under ``lock``."""

    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.snapshot = ConfigSnapshot(
            pallas_cpu_interpret=_env_flag('EVENTJAX_PALLAS_INTERPRET', False),
        )
        # What the process started with: the standard operators register by it, so whether their
        # pallas kernels run on the cpu never depends on when a family was first loaded.
        self.pallas_cpu_interpret_at_start = self.snapshot.pallas_cpu_interpret
        self.warned: frozenset[tuple[str, str]] = frozenset()
        # Told by the backends layer at import (config lists no backends):
        # catalog(platform) -> the names eventjax's bridges serve there;
        # explain(platform, backend) -> a sentence on why a name is not served.
        self.catalog: Callable[[str], tuple[str, ...]] = lambda platform: ()
        self.explain: Callable[[str, str], str] = lambda platform, backend: ''
        # Content keys: content -> slot, least recently current first.
        self.slots: collections.OrderedDict[tuple, _Slot] = collections.OrderedDict()
        self.slots[self.snapshot.content()] = _Slot(self.snapshot)
        self.max_slots = _env_count('EVENTJAX_MAX_CONFIGURATIONS', 64)
        self.next_key = 1
        self.epoch = 0  # published changes so far
        self.writers: dict[object, int] = {}  # writer -> epoch of its latest change
        self.dirtied = 0  # keys marked dirty so far (for configuration_stats)
        self.warming = 0  # threads inside warming() now


class _Local(threading.local):
    pin: ConfigSnapshot | None = None  # set by warming(): this thread's binds read it
    draft: Draft | None = None  # set by drafting(): this thread's changes go there
    seen = -1  # the epoch at this thread's latest traced bind


_STATE = _State()
_LOCAL = _Local()
_VERSION_KEY = jax.make_user_context(0)
_OVERRIDE_KEY = jax.make_user_context(())


def snapshot() -> ConfigSnapshot:
    """Return the current global configuration snapshot (frozen; never changes).

    Example:
        >>> import eventjax as ej
        >>> snap = ej.config.snapshot()
        >>> isinstance(snap.version, int)
        True
    """
    return _STATE.snapshot


def bind_snapshot() -> ConfigSnapshot:
    """The snapshot a bind in the calling thread resolves from, and whose key it binds with.

    At top level (an eager call) it is the current snapshot, read without a
    lock. Inside a trace it is read under the configuration lock, with the
    bookkeeping that keeps keys by content sound (see the module docstring).
    Inside :func:`warming` it is the pinned snapshot.
    """
    if _STATE.warming:  # a thread-local look-up costs more than this test; most processes never warm
        pin = _LOCAL.pin
        if pin is not None:
            return pin
    if _top_level():
        return _STATE.snapshot
    return _traced_snapshot()


def _traced_snapshot() -> ConfigSnapshot:
    with _STATE.lock:
        state, seen = _STATE, _LOCAL.seen
        me = threading.get_ident()
        if any(epoch > seen for writer, epoch in state.writers.items() if writer != me):
            # A change made elsewhere since this thread's previous traced bind: the trace
            # may have started under any key that stopped being current since then.
            for slot in state.slots.values():
                if slot.left is not None and slot.left > seen and not slot.dirty:
                    slot.dirty = True
                    state.dirtied += 1
        _LOCAL.seen = state.epoch
        return state.snapshot


def _slot_for(content: tuple, snap: ConfigSnapshot) -> _Slot:
    """The slot of ``content``, made with a fresh key if it has none or only a dirty one (lock held)."""
    state = _STATE
    slot = state.slots.get(content)
    if slot is None or slot.dirty:
        slot = _Slot(attrs.evolve(snap, version=state.next_key))
        state.next_key += 1
        state.slots[content] = slot
    return slot


def _kernels_of(content: tuple) -> tuple:
    return tuple((uid, table[1]) for uid, table in content[1])


def _evict() -> None:
    state = _STATE
    current = state.snapshot
    while len(state.slots) > state.max_slots:
        for content, slot in state.slots.items():
            if slot.snapshot is not current:
                del state.slots[content]
                break


def update(change: Callable[[ConfigSnapshot], ConfigSnapshot]) -> ConfigSnapshot:
    """Apply ``change`` to the current snapshot under the lock and publish it.

    ``change`` gets the current snapshot and returns either the same object
    (nothing changes) or a new one. A new content gets a new key
    (``version``); a content that was current before gets its old snapshot,
    key included, unless a trace that raced a change may have filed other
    kernels under that key (then it gets a fresh one). Returns the snapshot
    current afterwards.
    """
    draft = _LOCAL.draft
    if draft is not None:
        with _STATE.lock:  # writers' helpers (warnings) expect it held
            draft.snapshot = change(draft.snapshot)
        return draft.snapshot
    with _STATE.lock:
        state = _STATE
        old = state.snapshot
        new = change(old)
        if new is old:
            return old
        content = new.content()
        old_content = old.content()
        if content == old_content:
            return old
        slot = _slot_for(content, new)
        slot.left = None
        state.slots.move_to_end(content)
        state.epoch += 1
        left = state.slots.get(old_content)
        if left is not None and left.snapshot is old:
            left.left = state.epoch
            if _kernels_of(old_content) != _kernels_of(content):
                # Registered kernels are never unregistered: that content cannot come back.
                del state.slots[old_content]
        writer = threading.get_ident() if _top_level() else _IN_TRACE
        state.writers.pop(writer, None)
        state.writers[writer] = state.epoch
        if len(state.writers) > _WRITERS_KEPT:
            oldest = next(iter(state.writers))
            folded = state.writers.pop(oldest)
            state.writers[_FOLDED] = max(folded, state.writers.pop(_FOLDED, -1))
        # Traced binds read under this lock, so the order of these two lines only matters to an
        # eager call in the gap: it binds the new kernels and key under the old user context,
        # a correct pair that JAX's eager cache compiles once (at most one per two configurations).
        state.snapshot = slot.snapshot
        _VERSION_KEY.set_global(slot.snapshot.version)
        _evict()
        return slot.snapshot


def prepare(change: Callable[[ConfigSnapshot], ConfigSnapshot]) -> ConfigSnapshot:
    """The snapshot :func:`update` with ``change`` would publish now, its key reserved; nothing is published.

    Compile under it with :func:`warming`; a later :func:`update` to the same
    content publishes this very snapshot (unless the configuration table
    dropped it meanwhile), so what was compiled is found.
    """
    with _STATE.lock:
        old = _STATE.snapshot
        new = change(old)
        if new is old or new.content() == old.content():
            return old
        content = new.content()
        slot = _slot_for(content, new)
        _STATE.slots.move_to_end(content)
        _evict()
        return slot.snapshot


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


@attrs.define
class Draft:
    """The configuration built inside :func:`drafting`; ``snapshot`` is the prepared result after the block."""

    snapshot: ConfigSnapshot


@contextlib.contextmanager
def drafting() -> Iterator[Draft]:
    """Inside this block the calling thread's configuration changes build a draft; nothing is published.

    Any change works (``set_backend``, ``clear_backends``, a primitive's
    ``set_default``): each applies to the draft, starting from the current
    configuration. On leaving, the draft's key is reserved as with
    :func:`prepare`, and ``draft.snapshot`` can be passed to
    :func:`warming`. Making the same changes again afterwards publishes it.

    Example:
        >>> import eventjax as ej
        >>> with ej.config.drafting() as draft:
        ...     ej.set_backend('gpu', 'warp')
        >>> draft.snapshot.backends['gpu'], ej.get_backend('gpu') is None
        ('warp', True)
    """
    if _LOCAL.draft is not None:
        raise RuntimeError('drafting(): already drafting in this thread; finish that draft first.')
    draft = Draft(_STATE.snapshot)
    _LOCAL.draft = draft
    try:
        yield draft
    finally:
        _LOCAL.draft = None
    built = draft.snapshot
    draft.snapshot = prepare(lambda s: built if built.content() != s.content() else s)


@contextlib.contextmanager
def warming(snap: ConfigSnapshot) -> Iterator[ConfigSnapshot]:
    """Inside this block, the calling thread compiles and runs as if ``snap`` were current.

    Binds resolve their kernels from ``snap`` and jitted functions are keyed
    by ``snap``'s key, so what this thread compiles is found by every thread
    once ``snap``'s configuration is published (:func:`prepare`). Other
    threads are not affected. Use it in a background thread to compile the
    next configuration before switching to it.

    Raises:
        RuntimeError: called inside a trace (a jitted function, ``vmap``, ...).

    Example:
        >>> import eventjax as ej
        >>> nxt = ej.config.prepare_backend('cpu', 'jax')
        >>> with ej.config.warming(nxt):
        ...     pass  # call the served functions here
    """
    if not isinstance(snap, ConfigSnapshot):
        raise TypeError(f'warming(): expected a ConfigSnapshot from prepare(), got {type(snap).__name__}.')
    if not _top_level():
        raise RuntimeError('warming(): called inside a trace; enter it around the calls that compile, '
                           'outside any jitted function.')
    refuse_inside_task('warming()')
    previous = _LOCAL.pin
    _LOCAL.pin = snap
    with _STATE.lock:
        _STATE.warming += 1
    try:
        with _VERSION_KEY(snap.version):
            yield snap
    finally:
        _LOCAL.pin = previous
        with _STATE.lock:
            _STATE.warming -= 1


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
