"""``eventjax bench`` (benchmarks/cli.py): its tables, outputs and the checks made before anything is timed."""

import importlib.util
import json

import pytest

from benchmarks.cli import _output_problem, main, parser


class TestBench:
    def test_bench_prints_a_table_and_saves_a_plot(self, capsys, tmp_path):
        pytest.importorskip('matplotlib', reason='plots need the plot extra: pip install eventjax[plot]')
        plot = tmp_path / 'bench.png'
        code = main(['--family', 'csr', '--backends', 'jax', '--sizes', '100', '--quick',
                         '--no-progress', '--plot', str(plot)])
        out = capsys.readouterr().out
        assert code == 0
        assert 'binary_csrmv T' in out and 'vs dense' in out
        assert 'x floor' in out and 'x be' in out and 'x scipy' in out
        assert out.startswith('machine: memory bandwidth ') and ' GB/s ' in out.splitlines()[0]
        assert plot.stat().st_size > 1000

    def test_bench_delay_ends_with_the_targets_met_or_missed(self, capsys):
        code = main(['--family', 'delay', '--backends', 'jax', '--sizes', '300', '--quick',
                         '--no-progress'])
        out = capsys.readouterr().out
        assert code == 0
        assert 'n=300 csr_delay_deliver: delivery / undelayed: jax ' in out and 'no --brainevent-python' in out
        assert 'n=300 DelayedCSR.deliver: delivery / undelayed: jax ' in out
        assert 'n=300 csr_delay_deliver jax: delivery <= 1.5x the undelayed product: ' in out
        assert 'n=300 DelayedCSR.deliver jax: delivery <= 1.5x the undelayed product: ' in out
        assert out.rstrip().splitlines()[-1] == 'targets met: ' + str(out.count(': met (')) + ' of 2'

    def test_bench_writes_every_result_and_the_machine_to_json(self, capsys, tmp_path):
        path = tmp_path / 'bench.json'
        assert main(['--family', 'dense', '--backends', 'jax', '--sizes', '32', '--quick',
                         '--no-progress', '--no-compare', '--json', str(path)]) == 0
        doc = json.loads(path.read_text())
        assert doc['machine']['bandwidth_gbs'] > 0
        assert {r['operator'] for r in doc['results']} == {'binary_densemv T', 'binary_densemv',
                                                            'binary_densemm T (x16)'}
        assert all(r['floor_us'] > 0 and r['median_us'] > 0 for r in doc['results'])

    def test_bench_rejects_a_size_below_one_before_running(self, capsys):
        assert main(['--family', 'csr', '--sizes', '0', '--no-progress']) == 2
        assert '--sizes: every size must be a positive neuron count, got 0' in capsys.readouterr().err

    @pytest.mark.parametrize('rate', ['0', '2', '-0.5'])
    def test_bench_rejects_a_rate_outside_0_to_1_before_running(self, capsys, rate):
        assert main(['--family', 'csr', '--rate', rate, '--no-progress']) == 2
        assert '--rate: the fraction of neurons with an event must lie in (0, 1]' in capsys.readouterr().err

    def test_bench_plots_one_file_per_family_with_a_placeholder(self, capsys, tmp_path):
        pytest.importorskip('matplotlib', reason='plots need the plot extra: pip install eventjax[plot]')
        main(['--family', 'dense', '--family', 'csr', '--backends', 'jax', '--sizes', '64',
                  '--quick', '--no-progress', '--no-compare', '--plot', str(tmp_path / 'b_{family}.png')])
        assert sorted(p.name for p in tmp_path.iterdir()) == ['b_csr.png', 'b_dense.png']

    def test_bench_names_an_unknown_backend_and_the_close_match_before_running(self, capsys):
        code = main(['--family', 'dense', '--backends', 'nmba', '--no-progress'])
        err = capsys.readouterr().err
        assert code == 2
        assert "unknown backend 'nmba'" in err and "did you mean 'numba'" in err

    def test_bench_with_no_usable_backend_says_so_and_fails(self, capsys):
        code = main(['--family', 'dense', '--backends', 'pallas', '--sizes', '64', '--no-progress'])
        assert code == 1
        assert 'nothing to measure' in capsys.readouterr().out

    def test_bench_accepts_brainevents_jax_raw_as_jax(self, capsys):
        assert main(['--family', 'dense', '--backends', 'jax_raw', '--sizes', '32', '--quick',
                         '--no-progress', '--no-compare']) == 0
        assert '  jax ' in capsys.readouterr().out

    def test_bench_plot_without_matplotlib_fails_at_once_naming_the_extra(self, capsys, monkeypatch):
        real = importlib.util.find_spec
        monkeypatch.setattr(importlib.util, 'find_spec',
                            lambda name, *a, **k: None if name == 'matplotlib' else real(name, *a, **k))
        code = main(['--family', 'dense', '--backends', 'jax', '--no-progress', '--plot', 'x.png'])
        captured = capsys.readouterr()
        assert code == 2
        assert "pip install 'eventjax[plot]'" in captured.err
        assert 'vs dense' not in captured.out  # nothing was timed

    def test_bench_rejects_an_unknown_family(self, capsys):
        with pytest.raises(SystemExit):
            main(['--family', 'coo'])


class TestBenchOutputsCheckedFirst:
    """A --json or --plot that cannot be written stops the bench with code 2 before anything is timed."""

    @pytest.fixture(autouse=True)
    def nothing_may_run(self, monkeypatch):
        import benchmarks

        def must_not_run(*args, **kwargs):
            raise AssertionError('the benchmark started before its outputs were checked')

        monkeypatch.setattr(benchmarks, 'measure_machine', must_not_run)
        monkeypatch.setattr(benchmarks, 'run', must_not_run)

    def bench(self, capsys, *options):
        code = main(['--family', 'dense', '--backends', 'jax', '--no-progress', *options])
        return code, capsys.readouterr()

    @pytest.mark.parametrize('name, says', [
        ('nonexistent/dir/x.json', 'does not exist'),
        ('.', 'is a folder'),
    ])
    def test_a_json_path_that_cannot_be_written(self, capsys, tmp_path, name, says):
        code, out = self.bench(capsys, '--json', str(tmp_path / name))
        assert code == 2
        assert 'eventjax bench: error: --json' in out.err and says in out.err
        assert 'Traceback' not in out.err

    @pytest.mark.parametrize('name, says', [
        ('p_{family}_{foo}.png', 'unknown field {foo}'),
        ('p_{0}.png', 'unknown field {0}'),
        ('p_{}.png', 'unknown field {}'),
        ('p_{family}}.png', 'is not a valid name template'),
        ('p_{family.png', 'is not a valid name template'),
        ('nodir/p.png', 'does not exist'),
        ('nodir/p_{family}.png', 'does not exist'),
        ('p.xyz', 'the extension .xyz'),
        ('p', 'no extension'),
        ('.', 'is a folder'),
    ])
    def test_a_plot_template_that_cannot_be_saved(self, capsys, tmp_path, name, says):
        pytest.importorskip('matplotlib', reason='plots need the plot extra: pip install eventjax[plot]')
        code, out = self.bench(capsys, '--plot', str(tmp_path / name))
        assert code == 2
        assert 'eventjax bench: error: --plot' in out.err and says in out.err
        assert 'Traceback' not in out.err

    def test_a_file_where_a_folder_should_be(self, capsys, tmp_path):
        (tmp_path / 'file').write_text('')
        code, out = self.bench(capsys, '--json', str(tmp_path / 'file' / 'x.json'))
        assert code == 2 and 'is not a folder' in out.err

    def test_good_outputs_pass_the_check(self, tmp_path):
        pytest.importorskip('matplotlib', reason='plots need the plot extra: pip install eventjax[plot]')
        args = parser().parse_args(['--json', str(tmp_path / 'r.json'),
                                         '--plot', str(tmp_path / 'p_{family}.svg')])
        assert _output_problem(args) is None
