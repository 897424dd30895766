"""brainevent and scipy beside eventjax: the backend map, the result check, and their absence."""

import types

import jax.numpy as jnp
import numpy as np
import pytest

import benchmarks
from benchmarks import Machine, anchors, runner
from benchmarks.anchors import BraineventCall, brainevent_backend
from benchmarks.cases import CASES
from benchmarks.measure import Compared, measure_point

MACHINE = Machine(10.0, 64, 5.0, 2, None)
FCN_T = next(c for c in CASES if c.operator == 'binary_fcnmv T')
QUICK = {'budget_s': 0.01, 'max_calls': 5}


def _fake_brainevent(fn, backends=('numba', 'jax_raw')):
    """A module with brainevent's shape: ``binary_fcnmv`` and its primitive's backend query."""
    primitive = types.SimpleNamespace(available_backends=lambda platform: list(backends))
    return types.SimpleNamespace(binary_fcnmv=fn, binary_fcnmv_p=primitive)


class TestBackendMap:
    CALL = BraineventCall('binary_fcnmv', (), {})

    def test_numba_maps_to_numba_and_jax_to_jax_raw(self):
        module = _fake_brainevent(None)
        assert brainevent_backend(self.CALL, 'numba', 'cpu', module) == 'numba'
        assert brainevent_backend(self.CALL, 'jax', 'cpu', module) == 'jax_raw'

    def test_a_backend_brainevent_lacks_here_has_no_counterpart(self):
        module = _fake_brainevent(None, backends=('jax_raw',))
        assert brainevent_backend(self.CALL, 'warp', 'cpu', module) is None
        assert brainevent_backend(self.CALL, 'pallas', 'cpu', module) is None
        assert brainevent_backend(self.CALL, 'numba', 'cpu', module) is None

    def test_a_function_without_backends_is_compared_with_jax_only(self):
        call = BraineventCall('fcnmv', (), {}, backends=False)
        assert brainevent_backend(call, 'jax', 'cpu', None) == ''
        assert brainevent_backend(call, 'numba', 'cpu', None) is None


class TestResultCheck:
    def _measure(self, fn):
        problem = FCN_T.build(64, np.random.default_rng(0))
        notes = []
        results = measure_point(FCN_T, problem, 64, ['jax'], compared=Compared(_fake_brainevent(fn), None),
                                bandwidth_gbs=10.0, timing=QUICK, notes=notes)
        return results[0], notes

    def test_a_brainevent_result_equal_to_eventjaxs_is_timed(self):
        right = lambda w, i, s, *, shape, transpose, backend: jnp.zeros(shape[1]).at[i].add(
            jnp.where(s[:, None], w, 0.0))
        result, notes = self._measure(right)
        assert result.brainevent_backend == 'jax_raw' and result.brainevent_us > 0 and not notes

    def test_a_brainevent_result_that_differs_is_left_out_with_a_note(self):
        result, notes = self._measure(lambda w, i, s, *, shape, transpose, backend: jnp.ones(shape[1]))
        assert result.brainevent_us is None and result.x_brainevent is None
        assert 'brainevent jax_raw differs from eventjax jax' in notes[0] and 'no "x be" ratio' in notes[0]

    def test_a_brainevent_that_raises_is_left_out_with_a_note(self):
        def broken(*a, **k):
            raise RuntimeError('no kernel')
        result, notes = self._measure(broken)
        assert result.brainevent_us is None
        assert 'failed (RuntimeError: no kernel)' in notes[0]


def test_without_brainevent_and_scipy_the_columns_show_a_dash_and_a_note_says_why(monkeypatch):
    real = anchors.import_optional
    monkeypatch.setattr(runner, 'import_optional',
                        lambda name: None if name in ('brainevent', 'scipy.sparse') else real(name))
    monkeypatch.setattr(runner, 'cases_for', lambda families: [FCN_T])
    notes = []
    results = benchmarks.run(['fcn'], backends=['jax'], sizes=[64], quick=True, progress=None, notes=notes,
                             machine=MACHINE)
    assert [(r.brainevent_us, r.scipy_us) for r in results] == [(None, None)]
    assert any("brainevent does not import here (pip install 'eventjax[compare]')" in n for n in notes)
    assert any('scipy does not import here' in n for n in notes)
    row = benchmarks.format_table(results).splitlines()[1].split()
    assert row[-4:] == ['-', '-', '-', '-'] and row[-6] != '-'  # the floor is still there


def test_installed_brainevent_and_scipy_fill_their_columns():
    pytest.importorskip('brainevent', reason="brainevent is in the compare extra: pip install 'eventjax[compare]'")
    notes = []
    results = benchmarks.run(['fcn'], backends=['jax'], sizes=[64], quick=True, progress=None, notes=notes,
                             machine=MACHINE)
    by_op = {r.operator: r for r in results}
    assert by_op['binary_fcnmv T'].brainevent_backend == 'jax_raw'
    assert by_op['fcnmv'].brainevent_backend == ''  # brainevent's float fcnmv is plain jax.numpy
    assert all(r.brainevent_us > 0 and r.scipy_us > 0 for r in results), notes
    assert not [n for n in notes if 'differs' in n or 'failed' in n]
