"""Every example in a benchmark module's docstring runs and prints what it shows."""

import doctest
import importlib
import pkgutil

import pytest

import benchmarks
import eventjax as ej

MODULES = sorted(m.name for m in pkgutil.walk_packages(benchmarks.__path__, 'benchmarks.')
                 if not m.name.endswith('__main__') and '.tests' not in m.name and '.micro' not in m.name)


@pytest.mark.parametrize('name', MODULES)
def test_docstring_examples_run(name):
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    ej.clear_backends()
    assert result.failed == 0
