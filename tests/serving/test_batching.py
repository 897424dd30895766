"""DynamicBatcher: concurrent single-vector calls become few matrix calls, each caller's backend kept."""

import asyncio
import concurrent.futures
import gc
import threading
import time
import weakref

import jax.numpy as jnp
import numpy as np
import pytest

from eventjax.serving import DynamicBatcher

OFFSET = {None: 0.0, 'a': 1.0, 'b': 2.0}


class Recorder:
    """``rows @ w + offset[backend]``, recording every call's backend and batch size."""

    def __init__(self):
        self.calls = []
        self.lock = threading.Lock()
        self.w = np.arange(6.0).reshape(3, 2)

    def __call__(self, rows, backend=None):
        with self.lock:
            self.calls.append((backend, rows.shape[0]))
        return jnp.asarray(rows) @ self.w + OFFSET[backend]


def _hammer(batcher, n_threads, backends):
    results = [None] * n_threads
    start = threading.Barrier(n_threads)

    def worker(i):
        start.wait(30)
        v = np.full(3, float(i))
        results[i] = (backends[i % len(backends)], v, batcher(v, backend=backends[i % len(backends)], timeout=60))

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(n_threads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    return results


class TestDynamicBatcher:
    def test_each_caller_gets_its_own_row_computed_with_its_own_backend(self):
        fn = Recorder()
        batcher = DynamicBatcher(fn, max_batch=8, max_wait_s=0.02)
        try:
            results = _hammer(batcher, 24, [None, 'a', 'b'])
        finally:
            batcher.close()
        for backend, v, out in results:
            np.testing.assert_allclose(out, v @ fn.w + OFFSET[backend])

    def test_concurrent_requests_share_calls_padded_to_powers_of_two_up_to_max_batch(self):
        fn = Recorder()
        batcher = DynamicBatcher(fn, max_batch=8, max_wait_s=0.05)
        try:
            _hammer(batcher, 32, [None])
        finally:
            batcher.close()
        sizes = [k for _, k in fn.calls]
        assert len(sizes) < 32
        assert set(sizes) <= {1, 2, 4, 8}
        assert batcher.batches == len(sizes)

    def test_a_request_of_the_wrong_shape_fails_alone(self):
        batcher = DynamicBatcher(Recorder(), max_batch=8, max_wait_s=0.05)
        try:
            bad = batcher.submit(np.ones(5))
            good = batcher.submit(np.ones(3))
            with pytest.raises(TypeError):
                bad.result(30)
            np.testing.assert_allclose(good.result(30), np.ones(3) @ Recorder().w)
        finally:
            batcher.close()

    def test_coroutines_await_answers_without_blocking_the_loop(self):
        batcher = DynamicBatcher(Recorder(), max_batch=4, max_wait_s=0.01)

        async def main():
            return await asyncio.gather(*(batcher.call_async(np.full(3, float(i)), 'a') for i in range(6)))

        try:
            outs = asyncio.run(main())
        finally:
            batcher.close()
        for i, out in enumerate(outs):
            np.testing.assert_allclose(out, np.full(3, float(i)) @ Recorder().w + 1.0)

    def test_warmup_compiles_every_padded_size_for_each_backend(self):
        fn = Recorder()
        batcher = DynamicBatcher(fn, max_batch=6)
        try:
            timings = batcher.warmup(np.zeros(3), ['a', None])
        finally:
            batcher.close()
        assert fn.calls == [('a', 1), ('a', 2), ('a', 4), ('a', 6), (None, 1), (None, 2), (None, 4), (None, 6)]
        assert sorted(timings) == sorted(['a[1]', 'a[2]', 'a[4]', 'a[6]',
                                          'default[1]', 'default[2]', 'default[4]', 'default[6]'])

    def test_submitting_after_close_raises(self):
        batcher = DynamicBatcher(Recorder())
        batcher.close()
        with pytest.raises(RuntimeError, match='closed'):
            batcher.submit(np.zeros(3))

    @pytest.mark.parametrize('kwargs', [{'max_batch': 0}, {'max_batch': 2.0}, {'max_wait_s': -1.0}])
    def test_bad_limits_raise_value_error(self, kwargs):
        with pytest.raises(ValueError, match='DynamicBatcher'):
            DynamicBatcher(Recorder(), **kwargs)


class Gate:
    """``rows * 2``; a call with ``backend='slow'`` waits until :attr:`go` is set. Records the rows it saw."""

    def __init__(self):
        self.go = threading.Event()
        self.entered = threading.Event()
        self.seen = []

    def __call__(self, rows, backend=None):
        self.seen.append(np.asarray(rows).copy())
        if backend == 'slow':
            self.entered.set()
            assert self.go.wait(30), 'the test never released the slow call'
        return np.asarray(rows) * 2


def _busy_batcher():
    """A batcher whose worker is stuck in a slow call, and that call's future."""
    gate = Gate()
    batcher = DynamicBatcher(gate, max_batch=4, max_wait_s=0.0)
    slow = batcher.submit(np.ones(3), backend='slow')
    assert gate.entered.wait(30)
    return gate, batcher, slow


class TestFaults:
    """Nothing a request or the model does stops the worker; every caller gets an answer or its error."""

    def test_a_cancelled_request_is_skipped_and_the_worker_keeps_serving(self):
        gate, batcher, slow = _busy_batcher()
        try:
            gone = batcher.submit(np.full(3, 5.0))
            assert gone.cancel()
            gate.go.set()
            np.testing.assert_allclose(slow.result(30), np.full(3, 2.0))
            np.testing.assert_allclose(batcher(np.full(3, 7.0), timeout=30), np.full(3, 14.0))
            assert not any(np.any(rows == 5.0) for rows in gate.seen), 'the cancelled request was computed'
        finally:
            gate.go.set()
            batcher.close()

    def test_an_asyncio_timeout_cancels_its_request_and_later_requests_are_answered(self):
        gate, batcher, slow = _busy_batcher()

        async def main():
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(batcher.call_async(np.full(3, 5.0)), 0.05)
            gate.go.set()
            return await asyncio.wait_for(batcher.call_async(np.full(3, 7.0)), 30)

        try:
            np.testing.assert_allclose(asyncio.run(main()), np.full(3, 14.0))
            np.testing.assert_allclose(slow.result(30), np.full(3, 2.0))
        finally:
            gate.go.set()
            batcher.close()

    def test_a_call_that_times_out_is_cancelled_and_skipped(self):
        gate, batcher, slow = _busy_batcher()
        try:
            with pytest.raises(concurrent.futures.TimeoutError):
                batcher(np.full(3, 5.0), timeout=0.05)
            gate.go.set()
            np.testing.assert_allclose(batcher(np.full(3, 7.0), timeout=float('inf')), np.full(3, 14.0))
            assert not any(np.any(rows == 5.0) for rows in gate.seen), 'the timed-out request was computed'
        finally:
            gate.go.set()
            batcher.close()

    @pytest.mark.parametrize('bad', [lambda r: r.sum(), lambda r: r[:-1], lambda r: None],
                             ids=['scalar', 'one-row-short', 'none'])
    def test_a_model_that_returns_the_wrong_number_of_rows_fails_its_requests_only(self, bad):
        def fn(rows, backend=None):
            return bad(np.asarray(rows)) if backend == 'bad' else np.asarray(rows) * 2

        batcher = DynamicBatcher(fn, max_batch=4, max_wait_s=0.0)
        try:
            with pytest.raises(ValueError, match='one answer row per request'):
                batcher(np.ones(3), backend='bad', timeout=30)
            np.testing.assert_allclose(batcher(np.ones(3), timeout=30), np.full(3, 2.0))
        finally:
            batcher.close()

    def test_warmup_names_a_model_that_returns_the_wrong_number_of_rows(self):
        batcher = DynamicBatcher(lambda rows: np.asarray(rows).sum(), max_batch=2)
        try:
            with pytest.raises(ValueError, match='one answer row per request'):
                batcher.warmup(np.zeros(3))
        finally:
            batcher.close()

    @pytest.mark.parametrize('wait', [float('inf'), 1e10, float('nan'), 300.0])
    def test_a_wait_that_is_not_a_sane_number_of_seconds_is_refused_up_front(self, wait):
        with pytest.raises(ValueError, match='max_wait_s'):
            DynamicBatcher(Recorder(), max_wait_s=wait)

    @pytest.mark.parametrize('kwargs', [{'max_wait_s': '1'}, {'max_wait_s': True}])
    def test_a_wait_that_is_not_a_number_is_a_type_error(self, kwargs):
        with pytest.raises(TypeError, match='max_wait_s'):
            DynamicBatcher(Recorder(), **kwargs)

    def test_a_non_callable_model_and_a_bool_max_batch_are_refused(self):
        with pytest.raises(TypeError, match='callable'):
            DynamicBatcher(None)
        with pytest.raises(ValueError, match='max_batch'):
            DynamicBatcher(Recorder(), max_batch=True)

    def test_a_negative_call_timeout_is_refused_before_queueing(self):
        batcher = DynamicBatcher(Recorder())
        try:
            with pytest.raises(ValueError, match='timeout'):
                batcher(np.zeros(3), timeout=-1)
        finally:
            batcher.close()

    def test_a_dropped_batcher_is_collected_and_its_thread_ends(self):
        batcher = DynamicBatcher(Recorder(), max_wait_s=0.0)
        np.testing.assert_allclose(batcher(np.ones(3), timeout=30), np.ones(3) @ Recorder().w)
        thread, ref = batcher._worker, weakref.ref(batcher)
        del batcher
        gc.collect()
        assert ref() is None, 'the batcher is still referenced (by its own thread?)'
        thread.join(10)
        assert not thread.is_alive()

    def test_fifty_unclosed_batchers_leave_no_thread_behind(self):
        def batcher_threads():
            return {t for t in threading.enumerate() if t.name == 'eventjax-batcher'}

        before = batcher_threads()
        batchers = [DynamicBatcher(Recorder()) for _ in range(50)]
        started = batcher_threads() - before
        assert len(started) == 50
        del batchers
        gc.collect()
        deadline = time.monotonic() + 10
        for t in started:
            t.join(max(0.0, deadline - time.monotonic()))
        assert not any(t.is_alive() for t in started)

    def test_requests_queued_before_the_batcher_is_dropped_are_still_answered(self):
        gate, batcher, slow = _busy_batcher()
        thread = batcher._worker
        queued = batcher.submit(np.full(3, 3.0))
        del batcher
        gc.collect()
        gate.go.set()
        np.testing.assert_allclose(queued.result(30), np.full(3, 6.0))
        np.testing.assert_allclose(slow.result(30), np.full(3, 2.0))
        thread.join(10)
        assert not thread.is_alive()

    def test_close_twice_is_harmless(self):
        batcher = DynamicBatcher(Recorder())
        batcher.close()
        batcher.close()

    def test_warmup_takes_one_backend_name_as_a_string(self):
        batcher = DynamicBatcher(Gate(), max_batch=2)
        try:
            assert sorted(batcher.warmup(np.zeros(3), 'numba')) == ['numba[1]', 'numba[2]']
        finally:
            batcher.close()
