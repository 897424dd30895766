"""Overrides and coroutine tasks: several tasks interleaving on one loop never see each other's backend."""

import asyncio
import threading

import jax
import jax.numpy as jnp
import pytest

import eventjax as ej
from eventjax.errors import OverrideInTaskError
from tests.conftest import out_like


def _callers(prim):
    """An eager and a jitted caller of ``prim`` taking a per-call backend."""
    x = jnp.zeros(3)

    def eager(backend=None):
        return float(prim(x, outs=out_like(x), backend=backend)[0])

    jitted = jax.jit(lambda x, backend=None: prim(x, outs=out_like(x), backend=backend), static_argnames='backend')
    return {'eager': eager, 'jit': lambda backend=None: float(jitted(x, backend=backend)[0])}


class TestOverrideInsideATask:
    def test_entering_an_override_in_a_task_raises_naming_the_fixes(self, two_valued):
        async def main():
            with ej.config.override(cpu='b'):
                await asyncio.sleep(0)

        with pytest.raises(OverrideInTaskError, match=r'backend=.*asyncio\.to_thread'):
            asyncio.run(main())
        assert ej.config.current_override() == ()

    def test_the_error_is_a_runtime_error(self):
        assert issubclass(OverrideInTaskError, RuntimeError)

    def test_a_refused_override_leaves_other_tasks_on_the_global_backend(self, two_valued):
        call = _callers(two_valued)['jit']
        ej.set_backend('cpu', 'a')
        seen = []

        async def greedy():
            with pytest.raises(OverrideInTaskError):
                with ej.config.override(cpu='b'):
                    await asyncio.sleep(0.01)

        async def innocent():
            for _ in range(5):
                seen.append((call(), ej.config.current_override()))
                await asyncio.sleep(0)

        async def main():
            await asyncio.gather(greedy(), innocent())

        asyncio.run(main())
        assert seen == [(1.0, ())] * 5

    def test_an_override_entered_before_the_loop_applies_to_every_task(self, two_valued):
        call = _callers(two_valued)['jit']

        async def main():
            return call(), ej.config.current_override()

        with ej.config.override(cpu='b'):
            assert asyncio.run(main()) == (2.0, (('cpu', 'b'),))


@pytest.mark.parametrize('mode', ['eager', 'jit'])
class TestInterleavingTasks:
    def test_per_call_backends_of_interleaving_tasks_stay_their_own(self, two_valued, mode):
        call = _callers(two_valued)[mode]
        ej.set_backend('cpu', 'a')
        expected = {'a': 1.0, 'b': 2.0, None: 1.0}
        results = []

        async def task(backend):
            for _ in range(6):
                results.append((backend, call(backend)))
                await asyncio.sleep(0)  # hand the thread to the other tasks

        async def main():
            await asyncio.gather(*(task(b) for b in ('a', 'b', None, 'b', 'a', None)))

        asyncio.run(main())
        assert len(results) == 36
        assert all(value == expected[backend] for backend, value in results)

    def test_an_override_in_a_worker_thread_does_not_reach_the_loop_tasks(self, two_valued, mode):
        call = _callers(two_valued)[mode]
        entered, release = threading.Event(), threading.Event()

        def in_worker():
            with ej.config.override(cpu='b'):
                first = call()
                entered.set()
                release.wait(30)  # hold the override while the loop's tasks call
                return first, call(), ej.config.current_override()

        async def on_loop():
            while not entered.is_set():
                await asyncio.sleep(0.001)
            values = []
            for _ in range(4):
                values.append((call(), ej.config.current_override()))
                await asyncio.sleep(0)
            release.set()
            return values

        async def main():
            return await asyncio.gather(asyncio.to_thread(in_worker), on_loop(), on_loop())

        worker, loop_a, loop_b = asyncio.run(main())
        assert worker == (2.0, 2.0, (('cpu', 'b'),))
        assert loop_a == loop_b == [(1.0, ())] * 4
