"""The eventjax command line: --version, info, bench and cache."""

import os
import pathlib
import subprocess
import sys

import pytest

import eventjax as ej
from eventjax import cli

ROOT = pathlib.Path(__file__).parent.parent


class TestInfo:
    def test_info_reports_versions_devices_backends_threads_and_configuration(self, capsys):
        assert cli.main(['info']) == 0
        text = capsys.readouterr().out
        for heading in ('versions', 'devices', 'backends', 'numba threads', 'configuration'):
            assert f'\n{heading}' in '\n' + text
        for name in ('jax', 'jaxlib', 'numba', 'warp', 'numpy', 'python'):
            assert f'  {name} ' in text

    def test_info_shows_how_many_configurations_are_cached(self, capsys):
        cli.main(['info'])
        stats = ej.config.configuration_stats()
        assert f'configurations     {stats.cached} cached (limit {stats.limit}' in capsys.readouterr().out

    def test_info_says_why_a_backend_is_unavailable(self, capsys):
        cli.main(['info'])
        assert 'numba      gpu  no: numba kernels run on the CPU only.' in capsys.readouterr().out

    def test_info_shows_the_global_backend_and_the_thread_override(self, capsys):
        import eventjax as ej

        with ej.config.override(cpu='jax'):
            cli.main(['info'])
        assert 'override (thread)  cpu=jax' in capsys.readouterr().out

    def test_python_dash_m_eventjax_runs_info(self):
        env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / 'src'), os.environ.get('PYTHONPATH', '')]))
        proc = subprocess.run([sys.executable, '-m', 'eventjax', 'info'], env=env, capture_output=True, text=True,
                              timeout=300)
        assert proc.returncode == 0, proc.stderr
        assert 'configuration' in proc.stdout
        # warp's C library would print this on a machine without an NVIDIA driver; eventjax keeps it quiet.
        assert 'Could not find or load the NVIDIA CUDA driver' not in proc.stderr
        assert 'warning' not in proc.stderr.lower(), proc.stderr

    def test_version_prints_the_package_version(self, capsys):
        import eventjax

        with pytest.raises(SystemExit) as exit_:
            cli.main(['--version'])
        assert exit_.value.code == 0
        assert capsys.readouterr().out.strip() == f'eventjax {eventjax.__version__}'

    def test_help_shows_no_restructuredtext_markup(self, capsys):
        with pytest.raises(SystemExit):
            cli.main(['--help'])
        text = capsys.readouterr().out
        assert '``' not in text and ':func:' not in text
        assert 'cache' in text and 'bench' in text


class TestBenchFromACheckout:
    def test_bench_hands_its_options_to_the_checkouts_benchmarks(self, capsys):
        assert cli.main(['bench', '--family', 'csr', '--sizes', '0', '--no-progress']) == 2
        assert '--sizes: every size must be a positive neuron count, got 0' in capsys.readouterr().err

    def test_bench_outside_a_checkout_says_where_the_benchmarks_are(self, capsys, monkeypatch):
        monkeypatch.setattr(cli, '_checkout', lambda: None)
        assert cli.main(['bench', '--quick']) == 2
        err = capsys.readouterr().err
        assert 'not part of the installed package' in err and 'pip install -e .' in err

    def test_help_of_bench_lists_its_options(self, capsys):
        with pytest.raises(SystemExit):
            cli.main(['bench', '--help'])
        assert '--family' in capsys.readouterr().out


class TestCache:
    def test_cache_shows_the_folder_under_xdg_cache_home_and_its_size(self, capsys, monkeypatch, tmp_path):
        import numba

        monkeypatch.setattr(numba.config, 'CACHE_DIR', '')
        monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path))
        folder = tmp_path / 'eventjax' / 'numba_handlers'
        folder.mkdir(parents=True)
        (folder / 'h.py').write_text('x = 1\n')
        assert cli.main(['cache']) == 0
        out = capsys.readouterr().out
        assert str(folder) in out and 'holds 1 file(s), 6 B' in out

    def test_cache_clear_deletes_the_folder(self, capsys, monkeypatch, tmp_path):
        import numba

        monkeypatch.setattr(numba.config, 'CACHE_DIR', '')
        monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path))
        monkeypatch.delenv('EVENTJAX_CACHE_DIR', raising=False)  # else --clear empties that folder's libraries
        folder = tmp_path / 'eventjax' / 'numba_handlers'
        (folder / '__pycache__').mkdir(parents=True)
        (folder / '__pycache__' / 'h.nbi').write_bytes(b'0' * 10)
        assert cli.main(['cache', '--clear']) == 0
        assert 'deleted 1 file(s)' in capsys.readouterr().out
        assert not folder.exists()

    def test_cache_clear_that_cannot_delete_says_so_and_fails(self, capsys, monkeypatch, tmp_path):
        import numba

        monkeypatch.setattr(numba.config, 'CACHE_DIR', str(tmp_path))
        monkeypatch.setenv('EVENTJAX_CACHE_DIR', str(tmp_path))
        kept = tmp_path / 'numba_handlers' / 'h.py'
        kept.parent.mkdir()
        kept.write_text('x = 1\n')
        real = os.unlink

        def denied(path, *args, **kwargs):  # as in a folder of another user, or a read-only mount
            if str(path) == str(kept):
                raise PermissionError(13, 'Permission denied', str(path))
            return real(path, *args, **kwargs)

        monkeypatch.setattr(os, 'unlink', denied)
        assert cli.main(['cache', '--clear']) == 1
        captured = capsys.readouterr()
        assert 'deleted' not in captured.out
        assert str(kept) in captured.err and 'Permission denied' in captured.err and 'Fix:' in captured.err
        assert kept.exists()

    def test_cache_follows_numba_cache_dir_and_names_numbas_own_folder(self, capsys, monkeypatch, tmp_path):
        import numba

        monkeypatch.setattr(numba.config, 'CACHE_DIR', str(tmp_path))
        assert cli.main(['cache']) == 0
        out = capsys.readouterr().out
        assert str(tmp_path / 'numba_handlers') in out
        assert str(tmp_path / 'numba_handlers_') in out  # numba's index folder for those sources
