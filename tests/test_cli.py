"""The eventjax command line: info and bench."""

import os
import pathlib
import subprocess
import sys

import pytest

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

    def test_info_says_why_a_backend_is_unavailable(self, capsys):
        cli.main(['info'])
        assert 'numba  gpu  no: numba kernels run on the CPU only.' in capsys.readouterr().out

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


class TestBench:
    def test_bench_prints_a_table_and_saves_a_plot(self, capsys, tmp_path):
        plot = tmp_path / 'bench.png'
        code = cli.main(['bench', '--family', 'csr', '--backends', 'jax', '--sizes', '100', '--quick',
                         '--no-progress', '--plot', str(plot)])
        out = capsys.readouterr().out
        assert code == 0
        assert 'binary_csrmv T' in out and 'vs dense' in out
        assert plot.stat().st_size > 1000

    def test_bench_plots_one_file_per_family_with_a_placeholder(self, capsys, tmp_path):
        cli.main(['bench', '--family', 'dense', '--family', 'csr', '--backends', 'jax', '--sizes', '64',
                  '--quick', '--no-progress', '--plot', str(tmp_path / 'b_{family}.png')])
        assert sorted(p.name for p in tmp_path.iterdir()) == ['b_csr.png', 'b_dense.png']

    def test_bench_with_no_usable_backend_says_so_and_fails(self, capsys):
        code = cli.main(['bench', '--family', 'dense', '--backends', 'no_such_backend', '--no-progress'])
        assert code == 1
        assert 'nothing to measure' in capsys.readouterr().out

    def test_bench_rejects_an_unknown_family(self, capsys):
        with pytest.raises(SystemExit):
            cli.main(['bench', '--family', 'coo'])
