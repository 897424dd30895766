"""``eventjax bench --tpu``: the TPU table's code, run on the CPU in a tiny form, and its refusals without a TPU."""

import json
import time

import jax
import numpy as np
import pytest

from benchmarks import tpu_report, tpu_table
from benchmarks.cli import main
from benchmarks.tpu_table import MISMATCH, Row

CPU = jax.devices('cpu')[0]
no_tpu = pytest.mark.skipif(jax.default_backend() == 'tpu', reason='checks the refusal on a machine without a TPU')


class TestWithoutATpu:
    @no_tpu
    def test_tpu_fails_with_what_is_missing_and_the_fix(self, capsys):
        assert main(['--tpu', '--no-progress']) == 2
        err = capsys.readouterr().err
        assert 'eventjax bench: error: --tpu: JAX sees no TPU here (its default platform is cpu)' in err
        assert "pip install 'jax[tpu]'" in err and 'without --tpu' in err

    def test_a_doc_that_is_neither_rst_nor_markdown_is_refused_before_running(self, capsys):
        assert main(['--platform', 'cpu', '--tpu-doc', 'table.txt']) == 2
        assert "--tpu-doc: 'table.txt' must end in .rst" in capsys.readouterr().err

    def test_the_cpu_families_are_refused_with_the_tpu_sections_named(self, capsys):
        assert main(['--platform', 'cpu', '--family', 'csr']) == 2
        err = capsys.readouterr().err
        assert '--tpu-sections (products updates models)' in err and 'JAX_PLATFORMS=cpu' in err

    def test_an_unknown_operator_is_named_before_running(self, capsys):
        assert main(['--platform', 'cpu', '--tpu-ops', 'binary_csrmv', 'csr_matvec']) == 2
        assert "--tpu-ops: no product or update named 'csr_matvec'; known: binary_densemv" in capsys.readouterr().err


class TestReference:
    @pytest.mark.parametrize('columns', [0, 3])
    @pytest.mark.parametrize('transpose', [True, False])
    def test_the_reference_is_the_dense_product_of_the_same_connections(self, transpose, columns):
        rng = np.random.default_rng(1)
        idx, w = tpu_table._matrix(rng, 7, 4)
        dense = np.zeros((7, 7))
        np.add.at(dense, (np.repeat(np.arange(7), 4), idx.ravel()), w.ravel())
        x = tpu_table._events(rng, 7, 'f32', columns, 0.5)
        want = (x.T @ dense).T if transpose else dense @ x
        np.testing.assert_allclose(tpu_table.reference(idx, w, x, transpose, False), want, rtol=1e-12)
        np.testing.assert_allclose(tpu_table.reference(idx, w, x, transpose, True),
                                   ((x > 0).T @ dense).T if transpose else dense @ (x > 0), rtol=1e-12)


class TestRows:
    def test_each_product_is_timed_both_ways_and_matches_numpy(self):
        rows = tpu_table.product_rows(48, CPU, ['jax'], ops=['binary_csrmv', 'fcnmm'], compare=False)
        got = {(r.op, r.events, r.transpose) for r in rows}
        assert got == {(op, ev, t) for op, ev in [('dense mv', 'bool'), ('dense mm', 'f32'), ('binary_csrmv', 'bool'),
                                                  ('binary_csrmv', 'f32'), ('fcnmm', 'f32')] for t in (True, False)}
        assert all(r.error is None and r.loop_us > 0 and r.call_us > 0 and r.first_s > 0 for r in rows)
        assert all(r.diff <= MISMATCH for r in rows if r.backend == 'jax')

    def test_brainevent_is_timed_on_the_same_operands_where_installed(self):
        pytest.importorskip('brainevent', reason='the comparison needs eventjax[compare]')
        rows = tpu_table.product_rows(40, CPU, [], ops=['binary_fcnmv'], compare=True)
        be = [r for r in rows if r.backend == 'brainevent']
        assert len(be) == 4 and all(r.error is None for r in be)
        assert all(r.diff <= MISMATCH for r in be if r.events == 'bool')

    def test_each_update_is_timed_and_matches_the_first_backend(self):
        rows = tpu_table.update_rows(40, CPU, ['jax', 'jax'], ops=['fcn_delay_deliver'])
        assert [(r.op, r.backend) for r in rows] == [('fcn_delay_deliver', 'jax')] * 2
        assert all(r.error is None and r.loop_us > 0 and r.diff == 0 for r in rows)

    def test_a_backend_without_the_kernel_is_a_failed_row_with_the_reason(self):
        row, = tpu_table.update_rows(32, CPU, ['pallas'], ops=['csr_on_pre'])
        assert row.error.startswith('BackendNotFoundError') and 'pallas' in row.error
        assert tpu_report._cell(row) == 'failed' and 'csr_on_pre n=32 pallas: BackendNotFoundError' in \
            tpu_report.notes([row])[0]


class TestTimeBox:
    def test_a_row_past_its_box_reads_timed_out_and_the_caller_goes_on(self):
        start = time.perf_counter()
        with pytest.raises(tpu_table.RowTimeout, match='timed out after 0.1 s'):
            tpu_table.boxed(lambda deadline: time.sleep(1.5), 0.1, CPU)
        assert time.perf_counter() - start < 1.4
        row = tpu_table._measure(Row('updates', 'x', 1, 'jax'), 5.0, CPU, lambda deadline: (1.0, 2.0, 0.1, 0.0))
        assert row.loop_us == 1.0 and 'x n=1 jax: measured while a row that timed out still ran' in \
            tpu_report.notes([row])
        for thread in tpu_table._abandoned:  # the sleep ends by itself; later tests must not see it running
            thread.join()
        assert not tpu_table.abandoned()

    def test_a_cooperative_row_stops_at_its_deadline(self):
        def slow(deadline):
            time.sleep(0.3)
            tpu_table._check(deadline)

        row = tpu_table._measure(Row('updates', 'x', 1, 'jax'), 0.1, CPU, slow)
        assert row.error == 'timed out after 0.1 s' and tpu_report._cell(row) == 'timed out'


class TestCommand:
    def test_the_tables_go_to_the_docs_and_come_back_from_json(self, capsys, tmp_path):
        args = ['--platform', 'cpu', '--tpu-sections', 'models', '--backends', 'jax', '--cuba-ms', '0.5',
                '--pd14-scale', '0.01', '--pd14-ms', '1', '--pd14-warmup', '0', '--no-progress',
                '--tpu-doc', str(tmp_path / 'tpu_{section}.md'), '--json', str(tmp_path / 'm.json')]
        assert main(args) == 0
        md = (tmp_path / 'tpu_models.md').read_text()
        assert md.startswith(f'On cpu (cpu), JAX {jax.__version__}, eventjax ') and 'per simulation step' in md
        assert '| model | backend | neurons | synapses | us per step | RTF | rate (Hz) |' in md
        assert '| CUBA | `jax` | 4,000 | ' in md and '| PD14, scale 0.01, 1 ms after 0 ms | `jax` | ' in md
        doc = json.loads((tmp_path / 'm.json').read_text())
        cuba, pd14 = doc['rows']
        assert doc['machine']['device'] == 'cpu' and cuba['extra']['steps'] == 5 and pd14['extra']['steps'] == 10
        assert cuba['loop_us'] > 0 and pd14['loop_us'] > 0 and cuba['extra']['same_spikes']
        assert main(['--tpu-from', str(tmp_path / 'm.json'), '--tpu-doc', str(tmp_path / 'm.rst')]) == 0
        rst = (tmp_path / 'm.rst').read_text()
        assert '``jax``' in rst and '========' in rst
        cells = [line.split('|')[5].strip() for line in md.splitlines() if line.startswith('| ') and '`jax`' in line]
        assert len(cells) == 2 and all(cell in rst for cell in cells)

    def test_a_run_stopped_midway_keeps_the_rows_it_measured_in_its_json(self, capsys, tmp_path, monkeypatch):
        from benchmarks import tpu_models

        def stopped(*args, **kwargs):  # as a time limit's signal would stop the run
            raise KeyboardInterrupt

        monkeypatch.setattr(tpu_models, 'pd14_rows', stopped)
        path = tmp_path / 'part.json'
        with pytest.raises(KeyboardInterrupt):
            main(['--platform', 'cpu', '--tpu-sections', 'models', '--backends', 'jax', '--cuba-ms', '0.5',
                  '--no-progress', '--json', str(path)])
        doc = json.loads(path.read_text())
        assert [(r['op'], r['backend']) for r in doc['rows']] == [('CUBA', 'jax')] and doc['rows'][0]['loop_us'] > 0
        assert not (tmp_path / 'part.json.part').exists()

    def test_tpu_from_names_a_file_that_is_no_tpu_run(self, capsys, tmp_path):
        (tmp_path / 'x.json').write_text('{"results": []}')
        assert main(['--tpu-from', str(tmp_path / 'x.json')]) == 2
        assert 'not the --json of an eventjax bench --tpu run' in capsys.readouterr().err


class TestReport:
    def test_products_put_each_backend_beside_dense_and_brainevent_and_flag_a_difference(self):
        rows = [Row('products', 'dense mv', 4000, 'dense', 'bool', True, 95.0, 600.0),
                Row('products', 'binary_csrmv', 4000, 'pallas', 'bool', True, 28.0, 613.0, diff=0.0),
                Row('products', 'binary_csrmv', 4000, 'jax', 'bool', True, error='timed out after 120 s'),
                Row('products', 'binary_csrmv', 4000, 'brainevent', 'bool', True, 8478.0, 9000.0, diff=0.5)]
        text = tpu_report.format_section('products', rows, ['pallas', 'jax'], 'md')
        assert text.splitlines()[0] == ('| product | events | neurons | direction | `pallas` | `jax` | brainevent | '
                                        'dense `jnp` f32 |')
        assert text.splitlines()[2] == ('| `binary_csrmv` | bool | 4,000 | s @ W | 28 / 613 | timed out | '
                                        '8,478 / 9,000 (!) | 95 / 600 |')
        info = {'device': 'TPU v5 lite', 'platform': 'tpu', 'jax': '0.10.2', 'eventjax': '0.1.0'}
        full = tpu_report.section_text(info, 'products', rows, ['pallas', 'jax'], 0.02)
        assert full.startswith('On one TPU v5 lite chip, JAX 0.10.2, eventjax 0.1.0, microseconds per product')
        assert full.endswith('- binary_csrmv bool n=4000 s @ W brainevent: differs by 5.0e-01 (relative to the '
                             'largest value)')
