"""DynamicBatcher: concurrent single-vector calls become few matrix calls, each caller's backend kept."""

import asyncio
import threading

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
