"""Keys by content: a configuration seen before reuses its compiled code, races stay closed, memory is bounded."""

import threading

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from stress.harness import CompileCount

import eventjax as ej
from eventjax.config import runtime
from eventjax.serving import Warmup
from tests.conftest import make_two_valued, out_like

TIMEOUT = 120


@pytest.fixture
def prim_and_x():
    prim = make_two_valued('content_keys')
    x = jnp.zeros(3, jnp.float32)
    return prim, x


def _run(threads) -> None:
    for t in threads:
        t.start()
    for t in threads:
        t.join(TIMEOUT)
    assert not any(t.is_alive() for t in threads)


def _value(y) -> float:
    # NumPy, not jax.numpy: jnp's own jitted helpers are keyed by the configuration too.
    return float(np.asarray(y[0] if isinstance(y, (list, tuple)) else y).reshape(-1)[0])


class TestReuse:
    def test_flipping_back_and_forth_compiles_nothing_after_both_are_warm(self, prim_and_x):
        prim, x = prim_and_x
        f = jax.jit(lambda x: prim(x, outs=out_like(x)))
        for backend in 'ab':
            ej.set_backend('cpu', backend)
            f(x)
            prim(x, outs=out_like(x))
        with CompileCount() as count:
            for i in range(20):
                backend = 'ab'[i % 2]
                ej.set_backend('cpu', backend)
                assert _value(f(x)) == _value(prim(x, outs=out_like(x))) == (1.0 if backend == 'a' else 2.0)
        assert (count.compiles, count.traces) == (0, 0)

    def test_an_override_equal_to_a_seen_configuration_keeps_its_key(self, prim_and_x):
        prim, x = prim_and_x
        f = jax.jit(lambda x: prim(x, outs=out_like(x)))
        with ej.config.override(cpu='b'):
            assert _value(f(x)) == 2.0
        ej.set_backend('cpu', 'a')
        ej.set_backend('cpu', None)
        with CompileCount() as count, ej.config.override(cpu='b'):
            assert _value(f(x)) == 2.0
        assert count.compiles == 0


class TestRace:
    """A trace paused after JAX computed its key, while another thread changes the configuration."""

    def _paused_call(self, prim, x):
        started, go, result = threading.Event(), threading.Event(), {}

        def body(x):
            started.set()
            assert go.wait(TIMEOUT)
            return prim(x, outs=out_like(x))

        f = jax.jit(body)

        def call():
            result['value'] = _value(f(x))

        thread = threading.Thread(target=call, daemon=True)
        thread.start()
        assert started.wait(TIMEOUT)
        return f, go, thread, result

    def test_a_trace_that_read_b_under_a_key_does_not_run_b_when_a_comes_back(self, prim_and_x):
        prim, x = prim_and_x
        ej.set_backend('cpu', 'a')
        f, go, thread, result = self._paused_call(prim, x)  # keyed under A
        ej.set_backend('cpu', 'b')
        go.set()  # its bind reads B: B's kernel is traced under A's key
        thread.join(TIMEOUT)
        assert result['value'] == 2.0  # B was current during the call: a valid answer
        ej.set_backend('cpu', 'a')
        assert _value(f(x)) == 1.0  # with A current again the call runs A's backend
        ej.set_backend('cpu', 'b')
        assert _value(f(x)) == 2.0

    def test_a_trace_paused_while_the_configuration_goes_a_b_a_runs_a(self, prim_and_x):
        prim, x = prim_and_x
        ej.set_backend('cpu', 'a')
        f, go, thread, result = self._paused_call(prim, x)
        ej.set_backend('cpu', 'b')
        ej.set_backend('cpu', 'a')
        go.set()
        thread.join(TIMEOUT)
        assert result['value'] == 1.0
        assert _value(f(x)) == 1.0
        ej.set_backend('cpu', 'b')
        assert _value(f(x)) == 2.0

    def test_a_change_made_inside_a_trace_counts_as_another_threads(self, prim_and_x):
        prim, x = prim_and_x
        ej.set_backend('cpu', 'a')

        def body(x):
            ej.set_backend('cpu', 'b')  # the key was computed under A; the bind reads B
            return prim(x, outs=out_like(x))

        f = jax.jit(body)
        assert _value(f(x)) == 2.0
        ej.set_backend('cpu', 'a')
        g = jax.jit(lambda x: prim(x, outs=out_like(x)))
        assert _value(g(x)) == 1.0
        # Under A's key again, f must not run B's kernel from the cache without setting B.
        value = _value(f(x))
        assert value == {'a': 1.0, 'b': 2.0}[ej.get_backend('cpu')]


class TestWarming:
    def test_a_background_warmup_makes_the_switch_compile_nothing(self, prim_and_x):
        prim, x = prim_and_x
        f = jax.jit(lambda x: prim(x, outs=out_like(x)))
        ej.set_backend('cpu', 'a')
        assert _value(f(x)) == 1.0
        warm = Warmup()
        warm.add('f', f, jax.ShapeDtypeStruct(x.shape, x.dtype))
        done = warm.prepare('cpu', 'b', background=True)
        assert _value(f(x)) == 1.0  # this thread still serves A
        done.result(TIMEOUT)
        assert ej.get_backend('cpu') == 'a'
        with CompileCount() as count:
            ej.set_backend('cpu', 'b')
            assert _value(f(x)) == 2.0
            ej.set_backend('cpu', 'a')
            assert _value(f(x)) == 1.0
        assert (count.compiles, count.traces) == (0, 0)

    def test_warming_pins_only_its_thread(self, prim_and_x):
        prim, x = prim_and_x
        nxt = ej.config.prepare_backend('cpu', 'b')
        seen = {}

        def other():
            seen['other'] = _value(prim(x, outs=out_like(x)))

        with ej.config.warming(nxt):
            assert _value(prim(x, outs=out_like(x))) == 2.0
            thread = threading.Thread(target=other)
            thread.start()
            thread.join(TIMEOUT)
        assert seen['other'] == 1.0 and ej.get_backend('cpu') is None
        ej.set_backend('cpu', 'b')
        assert ej.config.snapshot() is nxt

    def test_warming_inside_a_trace_raises(self):
        nxt = ej.config.prepare_backend('cpu', 'jax')

        def body(x):
            with ej.config.warming(nxt):
                return x

        with pytest.raises(RuntimeError, match='inside a trace'):
            jax.jit(body)(1.0)


class TestBound:
    def test_the_table_keeps_at_most_the_limit(self, prim_and_x):
        prim, x = prim_and_x
        before = ej.config.get_max_configurations()
        try:
            ej.config.set_max_configurations(3)
            for backend in ['a', 'b', 'jax', 'numba', None, 'a']:
                ej.set_backend('cpu', backend)
                assert ej.config.configuration_stats().cached <= 3
            assert _value(prim(x, outs=out_like(x))) == 1.0
        finally:
            ej.config.set_max_configurations(before)

    def test_overrides_and_changes_over_many_backends_from_many_threads_stay_bounded(self):
        names = [f'k{i}' for i in range(8)]
        prim = ej.XLACustomKernel('many_backends')
        for i, name in enumerate(names):
            prim.def_kernel(name, 'cpu', lambda outs, i=i: lambda x: (x + i,))
        x = jnp.zeros(3, jnp.float32)
        f = jax.jit(lambda x: prim(x, outs=out_like(x)))
        before = ej.config.get_max_configurations()
        errors, sizes = [], []
        try:
            ej.config.set_max_configurations(4)
            keys = ej.config.configuration_stats().keys_made

            def overrides():
                for _ in range(3):
                    for i, name in enumerate(names):
                        with ej.config.override(cpu=name):
                            got = (_value(f(x)), _value(prim(x, outs=out_like(x))))
                        if got != (i, i):
                            errors.append(f'override {name}: got {got}')

            _run([threading.Thread(target=overrides) for _ in range(8)])
            # Per-thread overrides never make global keys, however many there are.
            assert ej.config.configuration_stats().keys_made == keys
            start = threading.Barrier(48)

            def change(t):
                start.wait(TIMEOUT)  # all alive at once: 48 different writers
                ej.set_backend('cpu', names[t % 8] if t % 9 else None)
                sizes.append(ej.config.configuration_stats().cached)

            _run([threading.Thread(target=change, args=(t,)) for t in range(48)])
            assert not errors
            assert max(sizes) <= 4
            assert ej.config.configuration_stats().cached <= 4
            # The writers the race rule remembers are bounded too (the oldest fold into one entry).
            assert len(runtime._STATE.writers) <= runtime._WRITERS_KEPT + 1
            current = ej.get_backend('cpu')
            want = names.index(current) if current else 0
            assert _value(f(x)) == _value(prim(x, outs=out_like(x))) == want
        finally:
            ej.config.set_max_configurations(before)

    @pytest.mark.parametrize('bad', [1, 2.5, True, '8'])
    def test_a_bad_limit_raises(self, bad):
        with pytest.raises(ValueError, match='at least 2'):
            ej.config.set_max_configurations(bad)
