"""Dynamic batching: concurrent single-vector calls gathered into one matrix call.

Tiny calls are bound by JAX's per-call dispatch and the GIL, so threads
calling ``mv`` side by side barely scale. A :class:`DynamicBatcher` hands
every request to one worker thread, which waits at most ``max_wait_s`` after
the first request for up to ``max_batch`` of them, stacks their vectors as
the rows of a matrix and makes one call (``mv`` becomes ``mm``). Requests
with different backends, shapes or dtypes are never stacked together, so
each caller's ``backend=`` holds. Batches are padded to a power of two, so
at most ``log2(max_batch) + 1`` shapes are ever compiled per backend.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import queue
import threading
import time
from collections.abc import Callable, Iterable
from typing import Any

import jax
import numpy as np

__all__ = ['DynamicBatcher']

_STOP = object()


def _bucket(k: int, max_batch: int) -> int:
    return min(1 << (k - 1).bit_length(), max_batch)


class DynamicBatcher:
    """Gather concurrent one-vector requests into one batched call.

    Args:
        fn: ``fn(rows, backend=b)`` maps a ``(k, n)`` array whose rows are
            requests to a ``(k, ...)`` array whose rows are their answers.
            ``backend=`` is omitted for requests without one.
        max_batch: the most requests in one call.
        max_wait_s: how long the first request of a batch waits for others.

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
        if not isinstance(max_batch, int) or max_batch < 1:
            raise ValueError(f'DynamicBatcher(): max_batch must be a positive int, got {max_batch!r}.')
        if not max_wait_s >= 0:
            raise ValueError(f'DynamicBatcher(): max_wait_s must be >= 0 seconds, got {max_wait_s!r}.')
        self._fn = fn
        self._max_batch = max_batch
        self._max_wait_s = float(max_wait_s)
        self._queue: queue.SimpleQueue = queue.SimpleQueue()
        self._closed = threading.Event()
        self.batches = 0  # calls made; written by the worker only
        self._worker = threading.Thread(target=self._serve, name='eventjax-batcher', daemon=True)
        self._worker.start()

    def submit(self, vector: Any, backend: str | None = None) -> concurrent.futures.Future:
        """Queue one request; the future gets its row of the answer (a NumPy array) or its error."""
        if self._closed.is_set():
            raise RuntimeError('DynamicBatcher.submit(): the batcher is closed; create a new one.')
        future: concurrent.futures.Future = concurrent.futures.Future()
        self._queue.put((np.asarray(vector), backend, future))
        return future

    def __call__(self, vector: Any, backend: str | None = None, timeout: float | None = None) -> np.ndarray:
        """Submit one request and wait for its answer (thread-safe)."""
        return self.submit(vector, backend).result(timeout)

    async def call_async(self, vector: Any, backend: str | None = None) -> np.ndarray:
        """Submit one request from a coroutine and await its answer without blocking the loop."""
        return await asyncio.wrap_future(self.submit(vector, backend))

    def warmup(self, example: Any, backends: Iterable[str | None] = (None,)) -> dict[str, float]:
        """Compile every padded batch size for each backend; return the seconds each took."""
        example = np.asarray(example)
        timings = {}
        for backend in backends:
            size = 1
            while True:
                start = time.perf_counter()
                self._run(np.repeat(example[None], size, axis=0), backend)
                timings[f'{backend or "default"}[{size}]'] = time.perf_counter() - start
                if size >= self._max_batch:
                    break
                size = min(2 * size, self._max_batch)
        return timings

    def close(self, timeout: float = 10.0) -> None:
        """Stop the worker after the queued requests are answered."""
        if not self._closed.is_set():
            self._closed.set()
            self._queue.put(_STOP)
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
                item[2].set_exception(RuntimeError('DynamicBatcher: closed before this request ran; retry '
                                                   'on a new batcher.'))

    def _run(self, rows: np.ndarray, backend: str | None) -> np.ndarray:
        kwargs = {} if backend is None else {'backend': backend}
        return np.asarray(jax.block_until_ready(self._fn(rows, **kwargs)))

    def _gather(self, first) -> list:
        batch, deadline = [first], time.perf_counter() + self._max_wait_s
        while len(batch) < self._max_batch:
            try:
                item = self._queue.get(timeout=max(deadline - time.perf_counter(), 0.0))
            except queue.Empty:
                break
            if item is _STOP:
                self._queue.put(_STOP)  # seen again by _serve once this batch is done
                break
            batch.append(item)
        return batch

    def _serve(self) -> None:
        while True:
            first = self._queue.get()
            if first is _STOP:
                return
            groups: dict[tuple, list] = {}
            for item in self._gather(first):
                vector, backend, _ = item
                groups.setdefault((backend, vector.shape, vector.dtype.str), []).append(item)
            for (backend, _, _), items in groups.items():
                self._answer(items, backend)

    def _answer(self, items: list, backend: str | None) -> None:
        k = len(items)
        rows = np.stack([vector for vector, _, _ in items])
        padded = _bucket(k, self._max_batch)
        if padded > k:
            rows = np.concatenate([rows, np.zeros((padded - k, *rows.shape[1:]), rows.dtype)])
        try:
            out = self._run(rows, backend)
        except BaseException as exc:  # every waiting caller gets the error; the worker lives on
            for _, _, future in items:
                future.set_exception(exc)
            return
        self.batches += 1
        for i, (_, _, future) in enumerate(items):
            future.set_result(out[i])
