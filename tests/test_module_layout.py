"""Modules stay small, and the import check tells a loop at import time from an import made at the call."""

import ast
import importlib.util
import pathlib

ROOT = pathlib.Path(__file__).parent.parent
SRC = ROOT / 'src' / 'eventjax'
MAX_LINES = 450


def _check_layers():
    spec = importlib.util.spec_from_file_location('check_layers', ROOT / 'tools' / 'check_layers.py')
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_no_module_in_src_is_over_the_limit():
    long = {str(p.relative_to(SRC)): n for p in SRC.rglob('*.py') if (n := len(p.read_text().splitlines())) > MAX_LINES}
    assert not long, f'split these modules (at most {MAX_LINES} lines each): {long}'


def test_an_import_inside_a_function_counts_for_the_layers_but_closes_no_loop():
    check = _check_layers()
    tree = ast.parse('from eventjax.containers import csr\n'
                     'def tocsr():\n'
                     '    from eventjax.containers import coo\n')
    every = check.imported_modules(tree, ['containers'])
    at_load = check.imported_modules(tree, ['containers'], deferred=False)
    assert ['containers', 'coo'] in every and ['containers', 'coo'] not in at_load
    assert ['containers', 'csr'] in at_load


def test_a_loop_of_module_level_imports_is_found():
    check = _check_layers()
    assert check.find_cycle({'a': {'b'}, 'b': {'a'}}) == ['a', 'b', 'a']
    assert check.find_cycle({'a': {'b'}, 'b': set()}) is None
