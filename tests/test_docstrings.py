"""Every example in a public docstring runs and prints what it shows."""

import doctest
import importlib
import pkgutil

import pytest

import eventjax as ej

MODULES = sorted(m.name for m in pkgutil.walk_packages(ej.__path__, 'eventjax.')
                 if not m.name.endswith('__main__'))
# The kernel modules' examples run in tests/kernels/test_docstrings.py: one file of every module's
# examples took minutes, and `--dist loadfile` kept it on one worker while the other sat idle.
KERNEL_MODULES = [m for m in MODULES if m.startswith('eventjax.kernels.')]


def run_examples(name):
    """Run the docstring examples of module ``name``; return how many failed."""
    module = importlib.import_module(name)
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    ej.clear_backends()
    return result.failed


@pytest.mark.parametrize('name', [m for m in MODULES if m not in KERNEL_MODULES])
def test_docstring_examples_run(name):
    assert run_examples(name) == 0


def test_readme_example_runs_and_prints_the_values_in_its_comments():
    import contextlib
    import io
    import pathlib
    import re

    text = (pathlib.Path(__file__).parent.parent / 'README.md').read_text()
    code = re.search(r'```python\n(.*?)```', text, re.S).group(1)
    expected = [m.group(1) for line in code.splitlines() if line.lstrip().startswith('print(')
                for m in [re.search(r'#\s*(\[[^\]]*\])', line)]]
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        exec(compile(code, 'README.md', 'exec'), {})
    ej.clear_backends()
    assert out.getvalue().split('\n')[:-1] == expected
    assert len(set(expected)) > 1  # the output shows the switch


# The compact-event and per-synapse names (brainevent's and eventjax's own): each exported with an example,
# defined in a module whose examples run (here or in tests/kernels/test_docstrings.py; doctest finds an
# object's examples in the module that defines it), so the examples are not run twice.
COMPACT_AND_PER_SYNAPSE = (
    'CompactEvents', 'IndexedEvents', 'BitPackedEvents', 'compact_events',
    'expand_events', 'bitpack', 'bitunpack', 'binary_csrmv_indexed', 'binary_csrmm_indexed', 'binary_csrmv_packed',
    'binary_fcnmv_packed', 'csrmv_dt2t', 'csrmm_dt2t', 'cscmv_dt2t', 'cscmm_dt2t', 'fcnmv_dt2t', 'fcnmm_dt2t',
    'csr_sddmm', 'csr_slice_rows')


@pytest.mark.parametrize('name', COMPACT_AND_PER_SYNAPSE)
def test_compact_and_per_synapse_names_have_an_example_that_runs(name):
    obj = getattr(ej, name)
    module = importlib.import_module(obj.__module__)
    assert obj.__module__ in MODULES, f'{name} is defined in {obj.__module__}, whose examples no test runs'
    found = doctest.DocTestFinder().find(module)
    assert any(t.examples and t.name.endswith('.' + obj.__name__) for t in found), f'{name} has no example'
