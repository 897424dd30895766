"""Where the numba handler cache lives: NUMBA_CACHE_DIR, then XDG_CACHE_HOME, then ~/.cache."""

import os
import pathlib
import subprocess
import sys
import textwrap

import pytest

from eventjax.config import cache

ROOT = pathlib.Path(__file__).resolve().parents[2]


class TestHandlerDir:
    def test_numba_cache_dir_wins(self, monkeypatch):
        monkeypatch.setenv('XDG_CACHE_HOME', '/xdg')
        assert cache.handler_dir('/nb') == '/nb/numba_handlers'

    def test_xdg_cache_home_is_used_without_numba_cache_dir(self, monkeypatch):
        monkeypatch.setenv('XDG_CACHE_HOME', '/xdg')
        assert cache.handler_dir('') == '/xdg/eventjax/numba_handlers'

    def test_a_relative_xdg_cache_home_is_ignored_as_the_spec_says(self, monkeypatch):
        monkeypatch.setenv('XDG_CACHE_HOME', 'relative')
        assert cache.handler_dir('') == os.path.join(os.path.expanduser('~'), '.cache', 'eventjax', 'numba_handlers')

    def test_the_numba_bridge_compiles_into_that_folder(self, monkeypatch, tmp_path):
        import numba

        from eventjax.backends.numba import codegen as numba_codegen

        monkeypatch.setattr(numba.config, 'CACHE_DIR', '')
        monkeypatch.setenv('XDG_CACHE_HOME', str(tmp_path))
        folder, cacheable = numba_codegen._source_dir()
        assert (folder, cacheable) == (str(tmp_path / 'eventjax' / 'numba_handlers'), True)


class TestClear:
    def test_clear_reports_what_each_folder_held_and_removes_it(self, tmp_path, monkeypatch):
        monkeypatch.setenv('EVENTJAX_CACHE_DIR', str(tmp_path))
        handlers = tmp_path / 'numba_handlers'
        handlers.mkdir()
        (handlers / 'a.py').write_text('abc')
        native = tmp_path / 'native_kernels'
        native.mkdir()
        (native / 'k-0.so').write_bytes(b'12')
        folders = cache.clear_cache(str(tmp_path))
        assert (folders[0].files, folders[0].size_bytes) == (1, 3)
        assert (folders[-1].role, folders[-1].files, folders[-1].size_bytes) == ('C++ and CUDA kernel libraries', 1, 2)
        assert not handlers.exists() and not native.exists()


class TestNativeDir:
    def test_eventjax_cache_dir_wins(self, monkeypatch):
        monkeypatch.setenv('EVENTJAX_CACHE_DIR', '/ej')
        monkeypatch.setenv('XDG_CACHE_HOME', '/xdg')
        assert cache.native_dir() == '/ej/native_kernels'

    def test_xdg_cache_home_is_used_without_it(self, monkeypatch):
        monkeypatch.delenv('EVENTJAX_CACHE_DIR', raising=False)
        monkeypatch.setenv('XDG_CACHE_HOME', '/xdg')
        assert cache.native_dir() == '/xdg/eventjax/native_kernels'



COMPILE = textwrap.dedent('''
    import sys
    import jax, numpy as np, numba
    from eventjax.backends.numba import bridge as nb
    out = (jax.ShapeDtypeStruct((3,), np.float32),)
    for s in range(2, 2 + int(sys.argv[1])):
        def kg(outs, s=np.float32(s)):
            @numba.njit
            def scale(x, y):
                y[...] = x * s
            return scale
        got = np.asarray(nb.numba_kernel_generator(kg)(outs=out)(np.ones(3, np.float32))[0]).tolist()
        assert got == [float(s)] * 3, got
    print('all compiled and right', flush=True)
''')

CLEAR = textwrap.dedent('''
    import time
    from eventjax.config.cache import clear_cache
    while True:  # as `eventjax cache --clear` in a loop, until the test stops it
        clear_cache()
        time.sleep(0.001)
''')


def _run_scale(s):
    import numpy as np

    from tests.backends.test_numba_cache import run, scale_kg

    return np.asarray(run(scale_kg(np.float32(s))))


class TestClearWhileCompiling:
    """A cache cleared under a compiling process costs that process a recompile, never an error."""

    @pytest.fixture(autouse=True)
    def _own_native_folder(self, monkeypatch, tmp_path):
        # clear_cache() also empties the C++/CUDA library folder. Without a folder of their own these tests
        # deleted the user's (~/.cache/eventjax/native_kernels) in a loop, so every other test process
        # compiled the standard C++ sources again, over a minute each on a loaded 2-core machine.
        monkeypatch.setenv('EVENTJAX_CACHE_DIR', str(tmp_path / 'own'))

    def test_a_clear_between_writing_and_caching_the_handler_is_retried(self, monkeypatch, tmp_path):
        import numba

        from eventjax.backends.numba import codegen as numba_codegen

        monkeypatch.setattr(numba.config, 'CACHE_DIR', str(tmp_path))
        real, calls = numba_codegen._cached_module, []

        def cleared_after_import(fingerprint, source):
            module = real(fingerprint, source)
            calls.append(1)
            if len(calls) == 1:
                cache.clear_cache(str(tmp_path))  # another process's `eventjax cache --clear`
            return module

        monkeypatch.setattr(numba_codegen, '_cached_module', cleared_after_import)
        assert _run_scale(11.0).tolist() == [11.0] * 3
        assert len(calls) == 2
        assert cache.cache_folders(str(tmp_path))[0].files >= 1, 'the retry should cache the handler again'

    def test_a_cache_that_keeps_vanishing_falls_back_to_compiling_without_it(self, monkeypatch, tmp_path):
        import numba

        from eventjax.backends.numba import codegen as numba_codegen

        monkeypatch.setattr(numba.config, 'CACHE_DIR', str(tmp_path))

        def vanished(fingerprint, source):
            raise FileNotFoundError(2, 'No such file or directory', str(tmp_path / 'numba_handlers'))

        monkeypatch.setattr(numba_codegen, '_cached_module', vanished)
        assert _run_scale(13.0).tolist() == [13.0] * 3

    def test_clearing_in_a_loop_while_another_process_compiles_does_not_fail_it(self, tmp_path):
        env = {**os.environ, 'NUMBA_CACHE_DIR': str(tmp_path),
               'PYTHONPATH': os.pathsep.join([str(ROOT / 'src'), os.environ.get('PYTHONPATH', '')])}
        clearer = subprocess.Popen([sys.executable, '-c', CLEAR], env=env, stdout=subprocess.DEVNULL,
                                   stderr=subprocess.PIPE, text=True)
        try:
            proc = subprocess.run([sys.executable, '-c', COMPILE, '1'], env=env, capture_output=True, text=True,
                                  timeout=600)
            assert clearer.poll() is None, f'the clearing process stopped: {clearer.stderr.read()}'
        finally:
            clearer.kill()
            clearer.wait(30)
        assert proc.returncode == 0, proc.stderr[-3000:]
        assert 'all compiled and right' in proc.stdout
