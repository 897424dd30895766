"""The availability report says which backend runs where, and how to get the missing ones."""

import importlib.util
import os
import subprocess
import sys

import pytest

import eventjax as ej
from eventjax.backends import bridge, pallas
from eventjax.backends.availability import (
    BACKENDS,
    PLATFORMS,
    BackendStatus,
    BackendUnavailableError,
    backend_status,
    backends_available,
    require_backend,
)

has_numba = importlib.util.find_spec('numba') is not None
has_warp = importlib.util.find_spec('warp') is not None


class TestReport:
    def test_every_backend_is_reported_on_every_platform(self):
        report = backends_available()
        assert set(report) == set(BACKENDS)
        for backend, per_platform in report.items():
            assert set(per_platform) == set(PLATFORMS)
            for platform, status in per_platform.items():
                assert isinstance(status, BackendStatus)
                assert (status.backend, status.platform) == (backend, platform)
                assert status.available or status.reason

    def test_statuses_are_frozen(self):
        status = backend_status('jax', 'cpu')
        with pytest.raises(AttributeError):
            status.available = False

    def test_jax_always_runs_on_the_cpu(self):
        assert backend_status('jax', 'cpu').available

    def test_platform_aliases_mean_gpu(self):
        assert backend_status('warp', 'cuda').platform == 'gpu'
        assert backend_status('jax', 'rocm').platform == 'gpu'

    @pytest.mark.skipif(not has_numba, reason='numba not installed')
    def test_numba_runs_on_the_cpu_only(self):
        assert backend_status('numba', 'cpu').available
        gpu = backend_status('numba', 'gpu')
        assert not gpu and 'CPU only' in gpu.reason

    @pytest.mark.skipif(not has_warp, reason='warp-lang not installed')
    def test_warp_runs_on_the_cpu_and_never_on_tpu(self):
        assert backend_status('warp', 'cpu').available
        assert not backend_status('warp', 'tpu')

    # What warp and JAX see is stubbed, so each case is checked on any machine, with or without a GPU.
    @pytest.mark.parametrize(('cuda', 'jax_gpu', 'reason'), [
        (False, False, 'No CUDA GPU visible to warp'),
        (False, True, 'No CUDA GPU visible to warp'),
        (True, False, 'warp sees a CUDA GPU but JAX does not'),
        (True, True, None),
    ])
    def test_warp_on_gpu_says_which_of_warp_and_jax_lacks_the_device(self, monkeypatch, cuda, jax_gpu, reason):
        from eventjax.backends.warp import bridge as warp_bridge

        monkeypatch.setattr(bridge, 'package_missing', lambda module: False)
        monkeypatch.setattr(bridge, 'jax_has_platform', lambda platform: jax_gpu)
        monkeypatch.setattr(warp_bridge, '_warp_devices', lambda: (True, cuda, ''))
        status = warp_bridge.status('gpu')
        assert status.available == (reason is None)
        if reason is not None:
            assert reason in status.reason and status.fix


class TestMissingPackages:
    def test_a_missing_package_names_the_pip_command(self, monkeypatch):
        monkeypatch.setattr(bridge, 'package_missing', lambda module: True)
        warp = backend_status('warp', 'cpu')
        numba = backend_status('numba', 'cpu')
        assert not warp and warp.fix == 'pip install warp-lang'
        assert not numba and numba.fix == 'pip install numba'

    def test_importing_the_backends_imports_neither_warp_nor_numba(self):
        code = ('import sys, eventjax.backends.availability, eventjax.backends.warp.bridge, '
                'eventjax.backends.pallas; '
                "assert 'warp' not in sys.modules and 'numba' not in sys.modules, sorted(sys.modules)")
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
        subprocess.run([sys.executable, '-c', code], check=True, env=env, timeout=120)


class TestRequireBackend:
    def test_an_available_backend_passes(self):
        assert require_backend('jax', 'cpu') is None

    def test_an_unavailable_backend_raises_with_reason_and_fix(self, monkeypatch):
        monkeypatch.setattr(bridge, 'package_missing', lambda module: True)
        with pytest.raises(BackendUnavailableError, match="'warp'.*'cpu'.*pip install warp-lang") as info:
            require_backend('warp', 'cpu')
        assert isinstance(info.value, RuntimeError)

    def test_an_unknown_backend_names_the_known_ones(self):
        with pytest.raises(ValueError, match='numba'):
            require_backend('triton', 'cpu')

    def test_an_unknown_platform_names_the_known_ones(self):
        with pytest.raises(ValueError, match='tpu'):
            require_backend('jax', 'metal')


@pytest.fixture
def restore_interpret():
    before = ej.backends.pallas.get_cpu_interpret()
    yield
    ej.backends.pallas.set_cpu_interpret(before)


@pytest.mark.usefixtures('restore_interpret')
class TestPallasInterpretSwitch:
    def test_off_reports_pallas_on_cpu_unavailable_with_the_fix(self):
        ej.backends.pallas.set_cpu_interpret(False)
        assert ej.backends.pallas.get_cpu_interpret() is False
        status = backend_status('pallas', 'cpu')
        assert not status and 'EVENTJAX_PALLAS_INTERPRET=1' in status.fix

    def test_on_reports_pallas_on_cpu_available(self):
        ej.backends.pallas.set_cpu_interpret(True)
        assert ej.backends.pallas.get_cpu_interpret() is True
        assert backend_status('pallas', 'cpu').available

    @pytest.mark.parametrize(('value', 'expected'), [('1', True), ('true', True), ('ON', True),
                                                     ('0', False), ('off', False), ('', False)])
    def test_the_environment_variable_sets_the_default(self, monkeypatch, value, expected):
        monkeypatch.setenv('EVENTJAX_PALLAS_INTERPRET', value)
        assert pallas._env_flag('EVENTJAX_PALLAS_INTERPRET', False) is expected

    def test_the_old_spelling_warns_and_sets_the_same_switch(self):
        with pytest.warns(DeprecationWarning, match=r'eventjax\.backends\.pallas\.set_cpu_interpret'):
            ej.config.set_pallas_cpu_interpret(True)
        assert ej.backends.pallas.get_cpu_interpret() is True
        with pytest.warns(DeprecationWarning, match='get_cpu_interpret'):
            assert ej.config.get_pallas_cpu_interpret() is True

    def test_the_switch_gives_the_configuration_a_new_key(self):
        ej.backends.pallas.set_cpu_interpret(False)
        off = ej.config.snapshot().version
        ej.backends.pallas.set_cpu_interpret(True)
        assert ej.config.snapshot().version != off

    def test_a_non_boolean_value_is_an_error_listing_the_accepted_words(self, monkeypatch):
        monkeypatch.setenv('EVENTJAX_PALLAS_INTERPRET', 'maybe')
        with pytest.raises(ValueError, match="'maybe'.*1/true"):
            pallas._env_flag('EVENTJAX_PALLAS_INTERPRET', False)


@pytest.mark.usefixtures('restore_interpret')
class TestPallasStandardRegistration:
    """The standard operators' pallas kernels reach the cpu by the environment at start, not by load order."""

    @staticmethod
    def _register(monkeypatch, at_start):
        monkeypatch.setattr(pallas, '_AT_START', at_start)
        prim = ej.XLACustomKernel(f'pallas_standard_{at_start}')
        pallas.standard(prim, lambda: importlib.import_module('eventjax.kernels.csr.pallas_impl'), 'binary_csrmv')
        return prim

    @pytest.mark.parametrize('interpret_now', [True, False])
    def test_the_setting_when_a_family_loads_does_not_decide(self, monkeypatch, interpret_now):
        ej.backends.pallas.set_cpu_interpret(interpret_now)
        prim = self._register(monkeypatch, at_start=False)
        assert 'pallas' not in prim.available_backends('cpu')
        assert 'pallas' in prim.available_backends('gpu')

    def test_registering_again_follows_the_setting_of_the_moment(self, monkeypatch):
        ej.backends.pallas.set_cpu_interpret(True)
        prim = self._register(monkeypatch, at_start=False)
        pallas.standard(prim, lambda: importlib.import_module('eventjax.kernels.csr.pallas_impl'), 'binary_csrmv')
        assert 'pallas' in prim.available_backends('cpu')

    def test_the_environment_at_start_puts_them_on_the_cpu(self, monkeypatch):
        ej.backends.pallas.set_cpu_interpret(False)
        prim = self._register(monkeypatch, at_start=True)
        assert 'pallas' in prim.available_backends('cpu')

    def test_turning_interpret_on_before_a_family_loads_leaves_its_cpu_kernels_as_they_were(self):
        code = ('import eventjax as ej\n'
                'ej.backends.pallas.set_cpu_interpret(True)\n'
                "prim = ej.get_registry()['binary_csrmv']\n"
                "print(sorted(prim.available_backends('cpu')))\n")
        env = {k: v for k, v in os.environ.items() if k != 'EVENTJAX_PALLAS_INTERPRET'}
        out = subprocess.run([sys.executable, '-c', code], env=env, capture_output=True, text=True, timeout=240)
        assert out.returncode == 0, out.stderr
        assert 'pallas' not in out.stdout and 'jax' in out.stdout
