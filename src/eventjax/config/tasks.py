"""Refuse a thread override inside a coroutine task.

JAX keys its jit caches on ``jax.make_user_context`` values, and those are
*thread*-local. An event loop runs all its tasks on one thread, so a
``with override(...)`` block that awaits would leave its value on the thread
while other tasks run: their eager calls would resolve to it, and their
already-compiled jit calls would hit the cache entry compiled under it
(JAX's C++ fast path computes the key from the thread-local values without
entering eventjax at all). No bookkeeping inside eventjax can see those
cached calls, so no task-local emulation can be sound; the only sound rule
is that an override is never entered on a thread while a task is running
there. Code that runs in a worker thread (``asyncio.to_thread``, a web
framework's thread pool) is not inside a task and may use overrides freely.
"""

from __future__ import annotations

import asyncio
import sys

from eventjax.errors import OverrideInTaskError

__all__ = ['refuse_inside_task', 'running_task']


def running_task() -> object | None:
    """The asyncio (or trio) task running on the calling thread, or None."""
    try:
        task = asyncio.current_task()
    except RuntimeError:  # no event loop runs on this thread
        task = None
    if task is None and 'trio' in sys.modules:
        try:
            task = sys.modules['trio'].lowlevel.current_task()
        except RuntimeError:  # not inside trio.run
            task = None
    return task


def refuse_inside_task(who: str) -> None:
    """Raise :class:`OverrideInTaskError` if the calling thread is running a coroutine task."""
    task = running_task()
    if task is None:
        return
    name = getattr(task, 'get_name', lambda: getattr(task, 'name', '?'))()
    raise OverrideInTaskError(
        f'{who}: called inside the coroutine task {name!r}. An override belongs to the thread, '
        f'and every task of this event loop shares the thread, so any other task that runs while '
        f'this one awaits would run (and reuse code compiled for) this override\'s backends. '
        f"Pass backend= to each call instead, or run the block in a worker thread: "
        f"`await asyncio.to_thread(fn)` where fn enters the override; a process-wide default "
        f'belongs in set_backend() at start-up.'
    )
