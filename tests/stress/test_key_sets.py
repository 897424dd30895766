"""The long stress run's bounded key sets: what the warm-up compiles is what the scenarios call."""

import collections

import numpy as np


def _modes(keys):
    """``{what: set of jit flags}`` for each ``what`` a key is grouped by."""
    out = collections.defaultdict(set)
    for what, jit in keys:
        out[what].add(jit)
    return out


class TestMixed:
    def test_every_operator_runs_on_every_backend_once_and_both_ways(self):
        from stress import mixed

        pool = mixed.long_pool(12345)
        keys = mixed.key_set(pool)
        pairs = [(pool[i].name, backend) for i, backend, _ in keys]
        assert len(pairs) == len(set(pairs)) == sum(len(mixed.choices(case)) for case in pool)
        for grouped in (_modes((pool[i].name, jit) for i, _, jit in keys),
                        _modes((backend, jit) for _, backend, jit in keys)):
            assert all(modes == {False, True} for modes in grouped.values()), grouped

    def test_random_calls_draw_from_the_key_set_only(self):
        from stress.harness import Report

        from stress import mixed

        pool = mixed.long_pool(12345)
        made = []
        original = mixed.call_and_check
        try:
            mixed.call_and_check = lambda report, case, backend, jit, who: made.append((case, backend, jit))
            mixed.hammer(Report('t'), pool, 7, float('inf'), 300)
        finally:
            mixed.call_and_check = original
        allowed = {(pool[i], backend, jit) for i, backend, jit in mixed.key_set(pool)}
        assert set(made) <= allowed and len(set(made)) > len(allowed) // 2


class TestBatching:
    def test_each_case_and_backend_runs_vmap_one_way_and_grad_the_other(self):
        from stress import batching

        pool = batching.long_pool(4242)
        keys = batching.key_set(pool)
        vmap = {(i, backend, tuple(choice.items())): jit for kind, i, backend, jit, choice in keys if kind == 'vmap'}
        grad = {(i, backend): jit for kind, i, backend, jit, _ in keys if kind == 'grad'}
        assert len(vmap) == sum(1 for key in keys if key[0] == 'vmap')
        for (i, backend), jit in grad.items():
            assert not pool[i].name.startswith('binary_')
            assert vmap[(i, backend, (('last', False),))] is not jit
        for kind in ('vmap', 'scan'):
            by_backend = _modes((backend, jit) for k, _, backend, jit, _ in keys if k == kind)
            assert by_backend and all(modes == {False, True} for modes in by_backend.values()), (kind, by_backend)
        mm = [i for i, case in enumerate(pool) if np.ndim(case.operand) == 2]
        assert {choice['last'] for kind, i, _, _, choice in keys if kind == 'vmap' and i in mm} == (
            {False, True} if mm else set())


class TestConfigLoad:
    def test_states_the_warm_up_drafted_are_switched_to_without_a_compile(self, monkeypatch):
        """No jitted call compiles; an eager call compiles only in the gap between a publish and its user context.

        The runtime publishes the snapshot, then the jit key's user context: an eager call
        that reads one before a change and the other after it pairs the key of one state with
        the context of its neighbour, a pair compiled at most once per kind of eager call. How
        many calls land in that gap depends on scheduling, so the bound counts such pairs (two
        per change of the cycle), not seconds or calls.
        """
        import threading

        import jax.monitoring
        from stress.harness import COMPILE_EVENT, Report

        from stress import config_load

        warmed = Report('warm-up')
        config_load.warm(warmed)
        assert warmed.ok and warmed.wrong == 0, warmed.failures
        calling = threading.local()
        compiled_in = collections.Counter()
        instrument = config_load.instrument

        def tagged(kind):
            calling.kind = kind
            try:
                return instrument(kind)
            finally:
                calling.kind = None

        def listen(event, duration, **kwargs):
            if event == COMPILE_EVENT:
                compiled_in[getattr(calling, 'kind', None)] += 1

        monkeypatch.setattr(config_load, 'instrument', tagged)
        jax.monitoring.register_event_duration_secs_listener(listen)
        try:
            report = config_load.run(1.0, threads=2, cold=0)
        finally:
            jax.monitoring.unregister_event_duration_listener(listen)
        assert report.ok and report.wrong == 0, report.failures
        # The flipper stops on time only after two passes over the cycle.
        assert report.extra['changes'] >= 2 * config_load.PERIOD
        eager = ('eager', 'override_skipped', 'per_call')
        assert set(compiled_in) <= set(eager), dict(compiled_in)
        assert all(n <= 2 * config_load.PERIOD for n in compiled_in.values()), dict(compiled_in)
