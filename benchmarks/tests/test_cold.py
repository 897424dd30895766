"""The cold-start table's child processes see what a fresh installation sees."""

import os

from benchmarks.micro import cold


class TestChildEnvironment:
    def test_children_get_the_given_caches_and_may_write_bytecode_as_an_installed_package_has(self, monkeypatch):
        monkeypatch.setenv('PYTHONDONTWRITEBYTECODE', '1')
        monkeypatch.setenv('JAX_ENABLE_X64', '1')
        env = cold._env('/tmp/somewhere')
        assert env['NUMBA_CACHE_DIR'] == os.path.join('/tmp/somewhere', 'numba')
        assert env['EVENTJAX_CACHE_DIR'] == os.path.join('/tmp/somewhere', 'ej')
        assert 'PYTHONDONTWRITEBYTECODE' not in env and 'JAX_ENABLE_X64' not in env

    def test_children_import_the_repositorys_sources_and_the_example_exists(self):
        assert cold._env('/tmp/x')['PYTHONPATH'] == str(cold.ROOT / 'src')
        assert (cold.ROOT / 'src' / 'eventjax' / '__init__.py').is_file()
        assert (cold.ROOT / 'docs' / 'examples' / 'cuba.py').is_file()
