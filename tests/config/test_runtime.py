"""The configuration runtime: snapshots, set_backend & co, and the thread override."""

import pathlib
import threading

import attrs
import jax
import jax.numpy as jnp
import pytest

import eventjax as ej
from eventjax.errors import UnknownBackendWarning
from tests.conftest import make_two_valued, out_like


@pytest.fixture(autouse=True)
def _forbid_clear_caches(monkeypatch):
    def refuse():
        raise AssertionError('eventjax must never call jax.clear_caches()')

    monkeypatch.setattr(jax, 'clear_caches', refuse)


class TestSnapshot:
    def test_snapshot_is_frozen_attrs(self):
        snap = ej.config.snapshot()
        assert attrs.has(type(snap))
        with pytest.raises(attrs.exceptions.FrozenInstanceError):
            snap.version = 99

    def test_snapshot_mappings_are_read_only(self):
        with pytest.raises(TypeError):
            ej.config.snapshot().backends['cpu'] = 'jax'

    def test_a_new_configuration_publishes_a_new_snapshot_with_a_new_key(self):
        before = ej.config.snapshot()
        ej.set_backend('cpu', 'jax')
        after = ej.config.snapshot()
        assert after is not before and after.version != before.version
        assert before.backends['cpu'] is None

    def test_keys_name_contents_a_configuration_seen_before_gets_its_snapshot_back(self):
        seen = {}
        for backend in ['jax', None, 'numba', None, 'jax', 'numba']:
            ej.set_backend('cpu', backend)
            snap = ej.config.snapshot()
            assert seen.setdefault(backend, snap) is snap
        assert len({s.version for s in seen.values()}) == 3

class TestSetBackend:
    def test_set_then_get_returns_the_backend(self):
        ej.set_backend('gpu', 'warp')
        assert ej.get_backend('gpu') == 'warp'

    def test_none_clears_the_platform(self):
        ej.set_backend('gpu', 'warp')
        ej.set_backend('gpu', None)
        assert ej.get_backend('gpu') is None

    def test_empty_string_raises_value_error(self):
        with pytest.raises(ValueError, match='empty'):
            ej.set_backend('cpu', '')

    def test_non_string_backend_raises_type_error(self):
        with pytest.raises(TypeError, match='string'):
            ej.set_backend('cpu', 3)

    def test_unknown_platform_raises_value_error_naming_valid_ones(self):
        with pytest.raises(ValueError, match='cpu, gpu, tpu'):
            ej.set_backend('npu', 'jax')

    @pytest.mark.parametrize('alias', ['cuda', 'rocm', 'GPU'])
    def test_cuda_and_rocm_mean_gpu(self, alias):
        ej.set_backend(alias, 'warp')
        assert ej.get_backend('gpu') == 'warp'

    def test_same_value_is_a_noop_keeping_snapshot_and_version(self):
        ej.set_backend('cpu', 'jax')
        before = ej.config.snapshot()
        ej.set_backend('cpu', 'jax')
        assert ej.config.snapshot() is before

    def test_clear_backends_clears_every_platform(self):
        ej.set_backend('cpu', 'jax')
        ej.set_backend('tpu', 'pallas')
        ej.clear_backends()
        assert all(ej.get_backend(p) is None for p in ('cpu', 'gpu', 'tpu'))

    def test_clear_backends_when_nothing_is_set_is_a_noop(self):
        before = ej.config.snapshot()
        ej.clear_backends()
        assert ej.config.snapshot() is before

    def test_a_typo_warns_once_naming_known_backends(self):
        with pytest.warns(UnknownBackendWarning, match='Known backends') as record:
            ej.set_backend('cpu', 'numbaa')
        assert len(record) == 1
        ej.set_backend('cpu', None)
        import warnings
        with warnings.catch_warnings():
            warnings.simplefilter('error')
            ej.set_backend('cpu', 'numbaa')

    def test_config_set_backend_is_the_same_function(self):
        assert ej.config.set_backend is ej.set_backend


class TestSettings:
    def test_numba_threads_round_trip_and_validate(self):
        ej.backends.numba.set_num_threads(2)
        assert ej.backends.numba.requested_num_threads() == 2
        ej.backends.numba.set_num_threads(None)
        with pytest.raises(ValueError, match='positive'):
            ej.backends.numba.set_num_threads(0)

    def test_pallas_interpret_switch_rejects_non_bool(self):
        with pytest.raises(TypeError, match='bool'):
            ej.backends.pallas.set_cpu_interpret('yes')


class TestGlobalChangeReachesCompiledCode:
    def test_eager_call_picks_up_a_new_global_backend(self, two_valued):
        x = jnp.zeros(3)
        assert float(two_valued(x, outs=out_like(x))[0]) == 1.0
        ej.set_backend('cpu', 'b')
        assert float(two_valued(x, outs=out_like(x))[0]) == 2.0

    def test_jitted_function_compiled_before_the_change_picks_it_up(self, two_valued):
        x = jnp.zeros(3)
        f = jax.jit(lambda x: two_valued(x, outs=out_like(x)))
        assert float(f(x)[0]) == 1.0
        ej.set_backend('cpu', 'b')
        assert float(f(x)[0]) == 2.0
        ej.set_backend('cpu', 'a')
        assert float(f(x)[0]) == 1.0

    def test_another_thread_sees_the_change_on_its_next_call(self, two_valued):
        x = jnp.zeros(3)
        f = jax.jit(lambda x: two_valued(x, outs=out_like(x)))
        results = []
        go, done = threading.Event(), threading.Event()

        def worker():
            results.append(float(f(x)[0]))
            results.append(float(two_valued(x, outs=out_like(x))[0]))
            go.wait(10)
            results.append(float(f(x)[0]))
            results.append(float(two_valued(x, outs=out_like(x))[0]))
            done.set()

        t = threading.Thread(target=worker)
        t.start()
        while len(results) < 2:
            t.join(0.01)
        ej.set_backend('cpu', 'b')
        go.set()
        t.join(30)
        assert results == [1.0, 1.0, 2.0, 2.0]

    def test_same_value_call_does_not_retrace(self, two_valued):
        traces = []
        x = jnp.zeros(3)

        @jax.jit
        def f(x):
            traces.append(1)
            return two_valued(x, outs=out_like(x))

        ej.set_backend('cpu', 'b')
        f(x)
        ej.set_backend('cpu', 'b')
        f(x)
        assert len(traces) == 1

    def test_per_call_backend_wins_over_the_global(self, two_valued):
        x = jnp.zeros(3)
        ej.set_backend('cpu', 'b')
        assert float(two_valued(x, outs=out_like(x), backend='a')[0]) == 1.0
        assert float(jax.jit(lambda x: two_valued(x, outs=out_like(x), backend='a'))(x)[0]) == 1.0

    def test_a_global_backend_the_primitive_lacks_is_skipped(self, two_valued):
        x = jnp.zeros(3)
        ej.set_backend('cpu', 'numba')
        assert float(two_valued(x, outs=out_like(x))[0]) == 1.0

    def test_the_primitive_default_applies_when_no_global_is_set(self, two_valued):
        x = jnp.zeros(3)
        two_valued.set_default('cpu', 'b')
        assert float(two_valued(x, outs=out_like(x))[0]) == 2.0
        ej.set_backend('cpu', 'a')
        assert float(two_valued(x, outs=out_like(x))[0]) == 1.0

    def test_set_default_reaches_already_jitted_code(self, two_valued):
        x = jnp.zeros(3)
        f = jax.jit(lambda x: two_valued(x, outs=out_like(x)))
        assert float(f(x)[0]) == 1.0
        two_valued.set_default('cpu', 'b')
        assert float(f(x)[0]) == 2.0


class TestOverride:
    def test_override_applies_inside_and_restores_after(self, two_valued):
        x = jnp.zeros(3)
        with ej.config.override(cpu='b'):
            assert float(two_valued(x, outs=out_like(x))[0]) == 2.0
        assert float(two_valued(x, outs=out_like(x))[0]) == 1.0

    def test_override_wins_over_global_but_not_over_per_call(self, two_valued):
        x = jnp.zeros(3)
        ej.set_backend('cpu', 'a')
        with ej.config.override(cpu='b'):
            assert float(two_valued(x, outs=out_like(x))[0]) == 2.0
            assert float(two_valued(x, outs=out_like(x), backend='a')[0]) == 1.0

    def test_overrides_nest_and_restore(self, two_valued):
        x = jnp.zeros(3)
        f = jax.jit(lambda x: two_valued(x, outs=out_like(x)))
        with ej.config.override(cpu='b'):
            with ej.config.override(cpu='a'):
                assert float(f(x)[0]) == 1.0
            assert float(f(x)[0]) == 2.0
            with ej.config.override(cpu=None):
                assert float(f(x)[0]) == 1.0
        assert ej.config.current_override() == ()

    def test_override_is_seen_only_in_its_own_thread(self, two_valued):
        x = jnp.zeros(3)
        f = jax.jit(lambda x: two_valued(x, outs=out_like(x)))
        seen = []
        with ej.config.override(cpu='b'):
            t = threading.Thread(target=lambda: seen.append((float(f(x)[0]), ej.config.current_override())))
            t.start()
            t.join(30)
            assert float(f(x)[0]) == 2.0
        assert seen == [(1.0, ())]

    def test_reentering_the_same_override_does_not_retrace(self, two_valued):
        traces = []
        x = jnp.zeros(3)

        @jax.jit
        def f(x):
            traces.append(1)
            return two_valued(x, outs=out_like(x))

        for _ in range(3):
            with ej.config.override(cpu='b'):
                f(x)
        assert len(traces) == 1

    def test_global_change_during_override_reaches_other_platforms(self):
        prim = ej.XLACustomKernel('override_other_platform')
        prim.def_kernel('a', 'cpu', lambda outs: lambda x: (x + 1,))
        prim.def_kernel('b', 'cpu', lambda outs: lambda x: (x + 2,))
        x = jnp.zeros(3)
        f = jax.jit(lambda x: prim(x, outs=out_like(x)))
        with ej.config.override(gpu='warp'):
            assert float(f(x)[0]) == 1.0
            ej.set_backend('cpu', 'b')
            assert float(f(x)[0]) == 2.0
            assert ej.config.current_override() == (('gpu', 'warp'),)

    def test_override_validates_names(self):
        with pytest.raises(ValueError, match='valid platforms'):
            with ej.config.override(npu='jax'):
                pass
        with pytest.raises(ValueError, match='empty'):
            with ej.config.override(cpu=''):
                pass


class TestNoClearCaches:
    def test_clear_caches_is_not_called_anywhere_in_the_source(self):
        root = pathlib.Path(ej.__file__).parent
        hits = [p for p in root.rglob('*.py') if 'clear_caches' in p.read_text()]
        assert hits == []

    def test_a_global_change_does_not_call_clear_caches(self):
        # the autouse fixture turns any call into an AssertionError
        ej.set_backend('cpu', 'jax')
        ej.clear_backends()


def test_make_two_valued_results_are_distinguishable():
    prim = make_two_valued()
    x = jnp.zeros(2)
    assert float(prim(x, outs=out_like(x), backend='a')[0]) != float(prim(x, outs=out_like(x), backend='b')[0])


class TestMovedSettings:
    @pytest.mark.parametrize('old, backend, new', [('set_numba_num_threads', 'numba', 'set_num_threads'),
                                                   ('get_numba_num_threads', 'numba', 'requested_num_threads'),
                                                   ('set_numba_parallel', 'numba', 'set_parallel'),
                                                   ('get_numba_parallel', 'numba', 'get_parallel'),
                                                   ('set_pallas_cpu_interpret', 'pallas', 'set_cpu_interpret'),
                                                   ('get_pallas_cpu_interpret', 'pallas', 'get_cpu_interpret')])
    def test_a_backend_setting_config_spelled_warns_and_is_the_backends_own(self, old, backend, new):
        with pytest.warns(DeprecationWarning, match=rf'goes in 0\.3\.0; use eventjax\.backends\.{backend}\.{new}'):
            assert getattr(ej.config, old) is getattr(getattr(ej.backends, backend), new)
