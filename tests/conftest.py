"""Shared fixtures: strict dtype promotion, a clean global config per test; the file order of the run."""

import collections
import functools
import itertools
import pathlib

import jax
import jax.numpy as jnp
import pytest

import eventjax as ej
from tests import grid

jax.config.update('jax_numpy_dtype_promotion', 'strict')
# Pallas kernels registered from here on (the pallas tests' own) are registered for the CPU too
# (interpret mode), so they run here. The standard operators' stay off the cpu (the interpreter is far
# too slow to join every backend test): they follow EVENTJAX_PALLAS_INTERPRET as the process started.
ej.config.set_pallas_cpu_interpret(True)

_names = itertools.count()

# Files whose few tests each run for many seconds (subprocesses, fresh compiles), longest first.
# `--dist loadfile` otherwise hands files out by descending test count, so these came last and
# the run ended with one worker busy on them while the other sat idle.
LONG_FILES = (
    'differential/test_mv.py', 'backends/test_numba_cache.py', 'differential/test_mm.py',
    'kernels/fixed_conn/test_wide_dtypes.py', 'differential/test_known_cases.py', 'backends/test_warp_threads.py',
    'test_multidevice.py', 'backends/test_numba_boundscheck.py', 'differential/test_jitc.py',
    'kernels/common/test_numba_events.py', 'kernels/csr/test_wide_dtypes.py', 'serving/test_load.py',
    'compat/test_brainstate.py', 'compat/test_cuba_brainstate.py', 'kernels/common/test_units.py',
)
_TESTS = pathlib.Path(__file__).parent

# Run by `make test-long` alone (CI runs both): every docstring and docs-page example (each compiles
# kernels of its own), the four-device sharding run in its own process, and numba's second-process
# handler compile. `make test` keeps a test of every operator, backend and transformation without them.
LONG_RUN_ONLY = (
    'tests/test_docstrings.py::', 'tests/kernels/test_docstrings.py::', 'benchmarks/tests/test_docstrings.py::',
    'tests/test_docs_examples.py::', 'tests/test_multidevice.py::',
    'tests/backends/test_numba_cache.py::TestAcrossProcesses::test_a_new_process_with_other_captured_values',
)


def pytest_configure(config):
    # xdist's own reordering (by test count) would undo the order set below.
    if getattr(config.option, 'dist', None) == 'loadfile' and hasattr(config.option, 'loadscopereorder'):
        config.option.loadscopereorder = False


@pytest.hookimpl(tryfirst=True)  # before `-m "not long"` deselects
def pytest_collection_modifyitems(items):
    """Rows outside each grid's pairwise covering go to ``make test-long`` (``tests/grid.py``); then the
    LONG_FILES first, then every other file by descending test count (a file's tests stay in order)."""
    for item in items:
        if item.nodeid.startswith(LONG_RUN_ONLY):
            item.add_marker(pytest.mark.long)
    grid.mark_outside_the_covering(items)
    @functools.cache
    def relative(name):
        path = pathlib.Path(name)
        return path.relative_to(_TESTS).as_posix() if path.is_relative_to(_TESTS) else name

    def file_of(item):
        # Once per file, not per test: thousands of pathlib calls cost each worker seconds.
        return relative(str(item.path))

    counts = collections.Counter(file_of(item) for item in items)
    rank = {name: i for i, name in enumerate(LONG_FILES)}
    # sort is stable: files with equal keys keep their collection order, and so does each file's tests.
    items.sort(key=lambda item: (rank.get(file_of(item), len(rank)), -counts[file_of(item)]))


@pytest.fixture(autouse=True)
def _clean_global_backends():
    ej.clear_backends()
    yield
    ej.clear_backends()


def make_two_valued(name='two_valued', *, a=1.0, b=2.0):
    """A primitive with cpu kernels 'a' (x + a) and 'b' (x + b): the result tells which ran."""
    prim = ej.XLACustomKernel(f'{name}_{next(_names)}')
    prim.def_kernel('a', 'cpu', lambda outs: lambda x: (x + a,))
    prim.def_kernel('b', 'cpu', lambda outs: lambda x: (x + b,))
    return prim


@pytest.fixture
def two_valued():
    return make_two_valued()


def out_like(x):
    return jax.ShapeDtypeStruct(jnp.shape(x), jnp.result_type(x))
