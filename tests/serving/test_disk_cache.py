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
