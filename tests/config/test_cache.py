"""Where the numba handler cache lives: NUMBA_CACHE_DIR, then XDG_CACHE_HOME, then ~/.cache."""

import os

from eventjax.config import cache


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

        from eventjax.backends import numba_codegen

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

