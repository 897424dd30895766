"""eventjax.warm / ``eventjax warm``: the standard kernels compiled into the disk caches ahead of time."""

import os
import subprocess
import sys
import textwrap

import pytest

import eventjax as ej
from eventjax.cli import main

pytest.importorskip('numba')

# The first process warms the dense family at its small size only (to keep the test short); the second
# calls one warmed operator and counts the numba compiles it needed.
_WARM = textwrap.dedent('''
    from eventjax.serving import disk_cache
    disk_cache._SIZES = ((64, 4),)
    rows = disk_cache.warm(('numba',), ('dense',))
    assert rows and all(r.error is None for r in rows), rows
    print(sorted(r.operator for r in rows))
''')
_USE = textwrap.dedent('''
    import jax, numpy as np
    from numba.core import event
    import eventjax as ej
    compiled = []
    class Count(event.Listener):
        def on_start(self, ev):
            compiled.append(ev)
        def on_end(self, ev):
            pass
    event.register('numba:compile', Count())
    W, s = np.ones((64, 64), np.float32), np.arange(64) % 3 == 0
    got = jax.jit(lambda W, s: ej.binary_densemv(W, s, transpose=True, backend='numba'))(W, s)
    assert float(got[0]) == float(s.sum())
    print(len(compiled))
''')


class TestWarm:
    @pytest.mark.long  # two fresh processes compiling from empty caches: about a minute on 2 busy cores
    def test_a_warmed_operator_compiles_nothing_in_the_next_process(self, tmp_path):
        env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / 'numba'), EVENTJAX_CACHE_DIR=str(tmp_path / 'ej'))
        first = subprocess.run([sys.executable, '-c', _WARM], env=env, capture_output=True, text=True, timeout=600)
        assert first.returncode == 0, first.stderr[-2000:]
        assert first.stdout.split('\n')[0] == "['binary_densemm', 'binary_densemv']"
        second = subprocess.run([sys.executable, '-c', _USE], env=env, capture_output=True, text=True, timeout=600)
        assert second.returncode == 0, second.stderr[-2000:]
        assert second.stdout.strip().splitlines()[-1] == '0'

    def test_an_unknown_family_is_a_value_error_naming_the_families(self):
        with pytest.raises(ValueError, match="choose from .*'csr'"):
            ej.warm(families=('csv',))

    def test_the_command_names_an_unknown_family_or_backend_and_fails(self, capsys):
        assert main(['warm', '--families', 'csv']) == 2
        assert 'unknown families' in capsys.readouterr().err
        assert main(['warm', '--backend', 'nope', '--families', 'dense']) == 2
        assert "backend(s) ['nope']" in capsys.readouterr().err

    def test_an_empty_backend_or_family_list_is_refused(self, capsys):
        assert main(['warm', '--backend', '', '--families', 'dense']) == 2
        assert '--backend names no backend' in capsys.readouterr().err
        assert main(['warm', '--backend', ' , ']) == 2
        assert main(['warm', '--families', '']) == 2
        assert '--families names no family' in capsys.readouterr().err

    def test_an_unknown_backend_beside_a_known_one_is_refused_before_anything_compiles(self, capsys, monkeypatch):
        from eventjax.serving import disk_cache

        monkeypatch.setattr(disk_cache, '_problems', _no_compile(disk_cache._problems))
        assert main(['warm', '--backend', 'jax,bogus', '--families', 'dense']) == 2
        captured = capsys.readouterr()
        assert "backend(s) ['bogus']" in captured.err and 'choose from' in captured.err
        assert captured.out == ''  # no operator was compiled, so none reported


def _no_compile(problems):
    """``_problems`` whose functions fail the test if called (so compiling any of them would)."""
    def wrapped(family, n, k):
        def never(*args, **kwargs):
            raise AssertionError('compiled before the flags were checked')
        return [(name, never, arrays) for name, _, arrays in problems(family, n, k)]
    return wrapped


_UNWRITABLE = textwrap.dedent('''
    import os, sys
    from eventjax.cli import main
    code = main(['warm', '--families', 'dense'])
    print('exit', code, sorted(n for n in os.listdir(sys.argv[1]) if n.startswith('eventjax_numba_')))
''')


class TestUnwritableCache:
    def test_warm_into_a_cache_it_cannot_write_fails_naming_the_folder(self, tmp_path):
        (tmp_path / 'a_file').write_text('')
        (tmp_path / 'tmp').mkdir()
        # A folder below a plain file can be created by no user, root included.
        env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / 'a_file' / 'numba'), TMPDIR=str(tmp_path / 'tmp'),
                   EVENTJAX_CACHE_DIR=str(tmp_path / 'ej'))
        proc = subprocess.run([sys.executable, '-c', _UNWRITABLE, str(tmp_path / 'tmp')], env=env,
                              capture_output=True, text=True, timeout=300)
        assert proc.returncode == 0, proc.stderr[-2000:]
        assert proc.stdout.strip().splitlines()[-1] == 'exit 1 []'
        assert 'cannot be written' in proc.stderr and str(tmp_path / 'a_file' / 'numba') in proc.stderr
        assert 'NUMBA_CACHE_DIR' in proc.stderr
        assert ' s\n' not in proc.stdout  # no compile time printed: nothing was compiled

    def test_a_kernel_compiled_without_a_writable_cache_leaves_no_temporary_folder(self, monkeypatch, tmp_path):
        import tempfile

        import numba

        from tests.backends.test_numba_cache import run, scale_kg

        (tmp_path / 'a_file').write_text('')
        (tmp_path / 'tmp').mkdir()
        monkeypatch.setattr(numba.config, 'CACHE_DIR', str(tmp_path / 'a_file' / 'numba'))
        monkeypatch.setattr(tempfile, 'tempdir', str(tmp_path / 'tmp'))
        assert run(scale_kg(17.0)) == [17.0] * 3
        assert list((tmp_path / 'tmp').iterdir()) == []
