"""Dynamic batching: concurrent single-vector calls gathered into one matrix call.

Tiny calls are bound by JAX's per-call dispatch and the GIL, so threads
calling ``mv`` side by side barely scale. A :class:`DynamicBatcher` hands
every request to one worker thread, which waits at most ``max_wait_s`` after
the first request for up to ``max_batch`` of them, stacks their vectors as
the rows of a matrix and makes one call (``mv`` becomes ``mm``). Requests
with different backends, shapes or dtypes are never stacked together, so
each caller's ``backend=`` holds. Batches are padded to a power of two, so
at most ``log2(max_batch) + 1`` shapes are ever compiled per backend.

The worker must outlive anything a request or the model does: a cancelled
request (a client that went away, an ``asyncio`` timeout) is skipped, an
error of the model or a wrong answer shape goes to the requests of that
batch only, and the thread holds no reference to the batcher, so a batcher
that is dropped without :meth:`DynamicBatcher.close` still stops its thread.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import math
import numbers
import queue
import threading
import time
import weakref
from collections.abc import Callable, Iterable
from typing import Any

import jax
import numpy as np

__all__ = ['DynamicBatcher']

_STOP = object()
# A batch waits this long at most for company: a longer wait is a unit mistake (300 for 300e-6).
MAX_WAIT_LIMIT_S = 60.0


def _bucket(k: int, max_batch: int) -> int:
    return min(1 << (k - 1).bit_length(), max_batch)


def _seconds(value: Any, who: str, what: str, limit: float | None = None) -> float | None:
    """``value`` as finite seconds >= 0 (``None`` and ``inf`` mean no limit where ``limit`` is None)."""
    if value is None and limit is None:
        return None
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f'{who}: {what} must be a number of seconds, got {value!r}.')
    value = float(value)
    if math.isinf(value) and value > 0 and limit is None:
        return None
    top = threading.TIMEOUT_MAX if limit is None else limit
    if not 0 <= value <= top:
        raise ValueError(f'{who}: {what} must be a finite number of seconds in [0, {top:g}], got {value!r}'
                         + ('.' if limit is None else '; the batching wait is in seconds, e.g. 300e-6.'))
    return value


def _settle(future: concurrent.futures.Future, result: Any = None, error: BaseException | None = None) -> None:
    """Answer ``future`` unless its caller already gave up (cancelled) or it is answered."""
    try:
        if error is not None:
            future.set_exception(error)
        else:
            future.set_result(result)
    except concurrent.futures.InvalidStateError:
        pass


class _Worker:
    """The worker thread's state. It holds no reference to its :class:`DynamicBatcher`."""

    def __init__(self, fn: Callable[..., Any], max_batch: int, max_wait_s: float) -> None:
        self.fn = fn
        self.max_batch = max_batch
        self.max_wait_s = max_wait_s
        self.queue: queue.SimpleQueue = queue.SimpleQueue()
        self.batches = 0  # calls made; written by the worker only

    def run(self, rows: np.ndarray, backend: str | None) -> np.ndarray:
        kwargs = {} if backend is None else {'backend': backend}
        out = np.asarray(jax.block_until_ready(self.fn(rows, **kwargs)))
        if out.ndim == 0 or out.shape[0] != rows.shape[0]:
            raise ValueError(f'DynamicBatcher: the model function returned shape {out.shape} for a batch of '
                             f'{rows.shape[0]} rows; it must map a (k, ...) array of requests to a (k, ...) '
                             f'array with one answer row per request (reduce over the other axes, not axis 0).')
        return out

    def gather(self, first) -> list:
        batch, deadline = [first], time.perf_counter() + self.max_wait_s
        while len(batch) < self.max_batch:
            try:
                item = self.queue.get(timeout=max(deadline - time.perf_counter(), 0.0))
            except queue.Empty:
                break
            if item is _STOP:
                self.queue.put(_STOP)  # seen again by serve once this batch is done
                break
            batch.append(item)
        return batch

    def serve(self) -> None:
        while True:
            first = self.queue.get()
            if first is _STOP:
                return
            batch = self.gather(first)
            try:
                # A request whose caller has given up is dropped here; the others can no longer be cancelled.
                live = [item for item in batch if item[2].set_running_or_notify_cancel()]
                groups: dict[tuple, list] = {}
                for item in live:
                    vector, backend, _ = item
                    groups.setdefault((backend, vector.shape, vector.dtype.str), []).append(item)
                for (backend, _, _), items in groups.items():
                    self.answer(items, backend)
            except BaseException as exc:  # whatever happens, no caller waits forever and the worker lives on
                for _, _, future in batch:
                    _settle(future, error=exc)

    def answer(self, items: list, backend: str | None) -> None:
        k = len(items)
        try:
            rows = np.stack([vector for vector, _, _ in items])
            padded = _bucket(k, self.max_batch)
            if padded > k:
                rows = np.concatenate([rows, np.zeros((padded - k, *rows.shape[1:]), rows.dtype)])
            out = self.run(rows, backend)
        except BaseException as exc:  # every waiting caller of this batch gets the error
            for _, _, future in items:
                _settle(future, error=exc)
            return
        self.batches += 1
        for i, (_, _, future) in enumerate(items):
            _settle(future, out[i])


class DynamicBatcher:
    """Gather concurrent one-vector requests into one batched call.

    Args:
        fn: ``fn(rows, backend=b)`` maps a ``(k, n)`` array whose rows are
            requests to a ``(k, ...)`` array whose rows are their answers.
            ``backend=`` is omitted for requests without one. An error it
            raises, or an answer without one row per request, fails the
            requests of that batch only.
        max_batch: the most requests in one call.
        max_wait_s: how long the first request of a batch waits for others
            (seconds, at most 60).

    A request may be cancelled (``future.cancel()``, an ``asyncio`` timeout
    around :meth:`call_async`): if it has not run yet it is skipped. Call
    :meth:`close` when done; a batcher that is dropped without it stops its
    thread once it is garbage-collected (unless ``fn`` refers to the batcher).

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from eventjax.serving import DynamicBatcher
        >>> w = jnp.ones((3, 2))
        >>> batcher = DynamicBatcher(jax.jit(lambda rows: rows @ w), max_batch=8)
        >>> batcher(jnp.array([1., 1., 1.])).tolist()
        [3.0, 3.0]
        >>> batcher.close()
    """

    def __init__(self, fn: Callable[..., Any], *, max_batch: int = 32, max_wait_s: float = 300e-6) -> None:
        if not callable(fn):
            raise TypeError(f'DynamicBatcher(): fn must be callable (rows, backend=...) -> rows, got {fn!r}.')
        if isinstance(max_batch, bool) or not isinstance(max_batch, int) or max_batch < 1:
            raise ValueError(f'DynamicBatcher(): max_batch must be a positive int, got {max_batch!r}.')
        max_wait_s = _seconds(max_wait_s, 'DynamicBatcher()', 'max_wait_s', MAX_WAIT_LIMIT_S)
        self._state = _Worker(fn, max_batch, max_wait_s)
        self._queue = self._state.queue
        self._closed = threading.Event()
        self._worker = threading.Thread(target=self._state.serve, name='eventjax-batcher', daemon=True)
        self._worker.start()
        # Dropped without close(): the stop mark still reaches the thread, behind the queued requests.
        self._stop = weakref.finalize(self, self._queue.put, _STOP)

    @property
    def batches(self) -> int:
        """How many batched calls the worker has made."""
        return self._state.batches

    def submit(self, vector: Any, backend: str | None = None) -> concurrent.futures.Future:
        """Queue one request; the future gets its row of the answer (a NumPy array) or its error."""
        if self._closed.is_set():
            raise RuntimeError('DynamicBatcher.submit(): the batcher is closed; create a new one.')
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._queue.put((np.asarray(vector), backend, future))
        return future

    def __call__(self, vector: Any, backend: str | None = None, timeout: float | None = None) -> np.ndarray:
        """Submit one request and wait for its answer (thread-safe); ``timeout`` in seconds, None for no limit.

        A request that times out is cancelled, so it is skipped if it has not run yet.
        """
        timeout = _seconds(timeout, 'DynamicBatcher()', 'timeout')
        future = self.submit(vector, backend)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise

    async def call_async(self, vector: Any, backend: str | None = None) -> np.ndarray:
        """Submit one request from a coroutine and await its answer without blocking the loop.

        Cancelling the awaiting task (``asyncio.wait_for``, a client that went
        away) cancels the request.
        """
        return await asyncio.wrap_future(self.submit(vector, backend))

    def warmup(self, example: Any, backends: Iterable[str | None] = (None,)) -> dict[str, float]:
        """Compile every padded batch size for each backend (one name may be a string); return the seconds each took."""
        backends = (backends,) if isinstance(backends, str) else tuple(backends)
        example = np.asarray(example)
        timings = {}
        for backend in backends:
            size = 1
            while True:
                start = time.perf_counter()
                self._state.run(np.repeat(example[None], size, axis=0), backend)
                timings[f'{backend or "default"}[{size}]'] = time.perf_counter() - start
                if size >= self._state.max_batch:
                    break
                size = min(2 * size, self._state.max_batch)
        return timings

    def close(self, timeout: float | None = 10.0) -> None:
        """Stop the worker after the queued requests are answered (waits up to ``timeout`` seconds)."""
        timeout = _seconds(timeout, 'DynamicBatcher.close()', 'timeout')
        self._closed.set()
        self._stop()  # puts the stop mark once, however often close() is called
        self._worker.join(timeout)
        if self._worker.is_alive():
            return
        # A submit racing with close may have queued behind the stop mark: answer it, never strand it.
        while True:
            try:
                item = self._queue.get_nowait()
            except queue.Empty:
                return
            if item is not _STOP:
                _settle(item[2], error=RuntimeError('DynamicBatcher: closed before this request ran; retry '
                                                    'on a new batcher.'))
