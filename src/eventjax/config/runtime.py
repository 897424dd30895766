"""The configuration runtime's core: one lock, one current snapshot, the jit keys, drafts and warming.

Writers take ``_STATE.lock``, build a new :class:`ConfigSnapshot` with
``attrs.evolve`` and publish it with one reference assignment (:func:`update`);
readers of an eager call take no lock. Each snapshot's key names its
content and reaches JAX's jit caches through a user context; a trace that
races a change marks the key it left dirty, so an executable filed under a
key always runs that key's configuration. The design, the race rule and the
memory bound are written out in the docs (:doc:`/concurrency`, "How a change
reaches compiled code"). The public setters built on this core
(``set_backend`` ... ``override``) are in :mod:`eventjax.config.setters`.
"""

from __future__ import annotations

import collections
import contextlib
import os
import threading
from collections.abc import Callable, Iterator

import attrs
import jax

from eventjax.config.snapshot import (
    ConfigSnapshot,
)
from eventjax.config.tasks import refuse_inside_task
from eventjax.config.tracing import top_level as _top_level

__all__ = [
    'Draft',
    'bind_snapshot',
    'current_override',
    'drafting',
    'prepare',
    'snapshot',
    'update',
    'warming',
]

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
        self.snapshot = ConfigSnapshot()
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
