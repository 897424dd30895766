"""Warmup: served calls compiled at start-up and again by its set_backend, not by the next request."""

import jax
import jax.numpy as jnp
import pytest

import eventjax as ej
from eventjax.serving import Warmup
from tests.conftest import out_like


def _traced(prim):
    traces = []

    @jax.jit
    def f(x):
        traces.append(1)
        return prim(x, outs=out_like(x))

    return f, traces


class TestWarmup:
    def test_run_calls_each_entry_once_per_backend(self, two_valued):
        calls = []
        warm = Warmup()
        warm.add('f', lambda x, backend=None: calls.append((x.shape, backend)) or x,
                 jax.ShapeDtypeStruct((2,), jnp.float32), backends=[None, 'a'])
        assert sorted(warm.run()) == ['f[a]', 'f[default]']
        assert calls == [((2,), None), ((2,), 'a')]

    def test_the_first_call_after_run_does_not_trace(self, two_valued):
        f, traces = _traced(two_valued)
        warm = Warmup()
        warm.add('f', f, jax.ShapeDtypeStruct((3,), jnp.float32))
        warm.run()
        assert len(traces) == 1
        assert float(f(jnp.zeros(3))[0]) == 1.0
        assert len(traces) == 1

    def test_set_backend_compiles_again_so_the_next_call_does_not_trace(self, two_valued):
        f, traces = _traced(two_valued)
        warm = Warmup()
        warm.add('f', f, jax.ShapeDtypeStruct((3,), jnp.float32))
        warm.run()
        assert list(warm.set_backend('cpu', 'b')) == ['f[default]']
        assert len(traces) == 2
        assert float(f(jnp.zeros(3))[0]) == 2.0
        assert len(traces) == 2

    def test_setting_the_current_backend_again_compiles_nothing(self, two_valued):
        f, traces = _traced(two_valued)
        warm = Warmup()
        warm.add('f', f, jax.ShapeDtypeStruct((3,), jnp.float32))
        ej.set_backend('cpu', 'a')
        warm.run()
        assert warm.set_backend('cpu', 'a') == {}
        assert len(traces) == 1

    def test_an_empty_backend_list_raises(self):
        with pytest.raises(ValueError, match='backends is empty'):
            Warmup().add('f', lambda: None, backends=[])


class TestBackendsArgument:
    def test_one_backend_name_may_be_given_as_a_string(self):
        calls = []
        warm = Warmup()
        warm.add('f', lambda x, backend=None: calls.append(backend) or x,
                 jax.ShapeDtypeStruct((2,), jnp.float32), backends='numba')
        assert warm.entries[0].backends == ('numba',)
        assert sorted(warm.run()) == ['f[numba]']
        assert calls == ['numba']

    def test_a_backend_that_is_not_a_name_is_a_type_error(self):
        with pytest.raises(TypeError, match='backends must be names or None, got 3'):
            Warmup().add('f', lambda x: x, jax.ShapeDtypeStruct((2,), jnp.float32), backends=[None, 3])
