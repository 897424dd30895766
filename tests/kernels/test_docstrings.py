"""Every example in a kernel module's public docstring runs and prints what it shows."""

import pytest

from tests.test_docstrings import KERNEL_MODULES, run_examples


@pytest.mark.parametrize('name', KERNEL_MODULES)
def test_docstring_examples_run(name):
    assert run_examples(name) == 0
