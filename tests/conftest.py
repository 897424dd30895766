"""Shared fixtures: strict dtype promotion, a clean global config per test; the file order of the run."""

import collections
import functools
import itertools
import os
import pathlib
import tempfile

import jax
import jax.numpy as jnp
import pytest

import eventjax as ej
from tests import grid

jax.config.update('jax_numpy_dtype_promotion', 'strict')
# Pallas kernels registered from here on (the pallas tests' own) are registered for the CPU too
# (interpret mode), so they run here. The standard operators' stay off the cpu (the interpreter is far
# too slow to join every backend test): they follow EVENTJAX_PALLAS_INTERPRET as the process started.
ej.backends.pallas.set_cpu_interpret(True)

_names = itertools.count()

# Files whose few tests each run for many seconds (subprocesses, fresh compiles), longest first.
# `--dist loadfile` otherwise hands files out by descending test count, so these came last and
# the run ended with one worker busy on them while the other sat idle.
LONG_FILES = (
    'differential/test_mv.py', 'backends/test_numba_cache.py', 'differential/test_mm.py',
    'kernels/fcn/test_wide_dtypes.py', 'differential/test_known_cases.py', 'backends/test_warp_threads.py',
    'test_multidevice.py', 'backends/test_numba_boundscheck.py', 'differential/test_jitc.py',
    'kernels/common/test_numba_events.py', 'kernels/csr/test_wide_dtypes.py', 'serving/test_load.py',
    'compat/test_brainstate.py', 'compat/test_cuba_brainstate.py', 'kernels/common/test_units.py',
)
_TESTS = pathlib.Path(__file__).parent

# Run by `make test-long` alone (CI runs both): every docstring, docs-page example and README walk-through
# (each compiles kernels of its own), the four-device sharding run in its own process, numba's second-process handler
# compiles, and checks of seconds each (fresh processes, compilers, threads, example runs) beside a check
# of the same path that stays in the default run (named beside each). `make test` keeps a test of every operator,
# backend and transformation without them.
LONG_RUN_ONLY = (
    'tests/test_docstrings.py::', 'tests/kernels/test_docstrings.py::', 'benchmarks/tests/test_docstrings.py::',
    'tests/test_docs_examples.py::', 'tests/test_multidevice.py::', 'tests/backends/test_walkthrough.py::',
    'tests/models/test_microcircuit_pull.py::test_the_modules_examples_run',
    # test_a_cached_handler_loads_without_numbas_compiler... keeps a cross-process check
    'tests/backends/test_numba_cache.py::TestAcrossProcesses::',
    'tests/backends/test_numba_cache.py::TestEditsAcrossProcesses::',
    # the blocks' check against the one-process network and the distributed example's two-process run stay
    'tests/models/test_microcircuit_distributed.py::test_two_processes_give_the_one_process_spikes[',
    # the launcher's own failure tests (TestSpawn) stay
    'tests/distributed/test_distributed.py::TestAcrossProcesses::test_a_process_that_dies_ends_the_others_with_an_error',
    # the plasticity bench's targets and brainevent's agreement on every case stay
    'benchmarks/tests/test_plasticity.py::test_tiny_run_times_every_row_and_finds_no_copy_in_the_scan',
    'benchmarks/tests/test_runner.py::test_every_exported_case_builds_a_problem_whose_call_matches_its_dense_baseline',
    # the forms bench's reading and kernel forms (their kernels' own interpreter tests stay; its XLA forms stay)
    'benchmarks/tests/test_tpu_delivery_forms.py::test_the_read_forms_sum_the_same_inputs_with_and_without_a_ring',
    'benchmarks/tests/test_tpu_delivery_forms.py::test_the_kernel_forms_listed_by_windows_and_by_tiles_give_the_jax_',
    # the table-and-plot run stays
    'benchmarks/tests/test_cli.py::TestBench::test_bench_plots_one_file_per_family_with_a_placeholder',
    # nvcc's builds, for a GPU only; the numba-cuda launcher's build without a GPU stays
    *(f'tests/backends/test_native_bridge.py::TestCudaBuild::{name}' for name in (
        'test_a_cuda_handler_compiles_and_links_without_a_gpu', 'test_the_standard_cuda_kernels_compile_for_')),
    'tests/test_brainevent_names.py::TestNativeKernels::test_load_cuda_inline_and_file_build_for_the_gpu',
    # the numba, jax and warp runs stay
    'tests/models/test_brette2007.py::test_float64_cuba_gives_nest_s_spike_trains_and_potentials[cpp-',
    # warp kernels defined or built on several threads at once; threads calling warp kernels
    # (test_warp_bridge.py's TestThreads, the mixed stress scenario) stay
    'tests/backends/test_warp_threads.py::TestConcurrentDefinitionAndBuild::',
    # a clear between writing and caching the handler stays
    'tests/config/test_cache.py::TestClearWhileCompiling::test_clearing_in_a_loop_while_another_process_compiles',
    # `eventjax info` in-process stays
    'tests/test_cli.py::TestInfo::test_python_dash_m_eventjax_runs_info',
    # one parallel gather per shared row loop stays (binary CSR and FCN, float FCN, dense)
    'tests/kernels/common/test_numba_events.py::TestParallelResults::test_every_other_parallel_gather',
    # brainstate's layers on eventjax (tests/compat/test_brainstate.py) stay; make test-compat runs its models
    'tests/compat/test_cuba_brainstate.py::',
    # the bimodal weights of the same training run stay
    'tests/test_stdp_example.py::test_the_trained_output_rate_hardly_depends_on_the_input_rate',
    # the one-process network's spikes and rates, and the blocks of the distributed run, stay
    'tests/models/test_microcircuit.py::test_the_owner_split_network_spikes_as_the_one_part_network',
    'tests/models/test_microcircuit.py::test_the_network_s_kernels_run_on_the_library_s_threading_layer',
    # bool, int8, int32, int64, uint8, the three floats and complex64 stay
    *(f'tests/backends/test_numba_bridge.py::TestRoundTrip::test_identity_returns_every_dtype_unchanged[{name}]'
      for name in ('int16', 'uint16', 'uint32', 'uint64', 'complex128')),
    # PD14's rates by population over 200 ms (20 s); its spikes on every backend stay
    'tests/models/test_microcircuit.py::test_poisson_driven_pd14_fires_at_plausible_rates_per_population',
    # the chunk's steps shared by two threads stay (the one-thread loop runs in every other chunk test)
    'tests/models/test_microcircuit_pull.py::test_a_chunk_s_steps_shared_by_two_threads_give_the_scan_s_spikes[1]',
    # whole layout rows read in place: the float and shared-weight cases of 128 entries stay
    'tests/kernels/pallas/test_tpu_csr.py::test_entries_in_whole_layout_rows_are_read_in_place[128-True-False]',
)


def _share_compiled_programs(config):
    """Compile each XLA program once per run: a JAX compilation cache the test workers share.

    Most of a run's time was XLA compiling, and most of those programs were compiled before: the
    same reference computations and eager operations recur across files and across the two
    workers (jax's in-memory caches key on the Python function, so a test's fresh function
    compiles again). The cache lives in pytest's cache folder (``pytest --cache-clear`` empties it),
    so a fresh clone starts empty. jax keys each entry on the program, the compile options and the
    jaxlib version, and compile counts (``/jax/core/compile/backend_compile_duration``) are the
    same with and without it.
    """
    if getattr(config, 'cache', None) is None:  # -p no:cacheprovider
        return
    from jax._src import lru_cache

    if not hasattr(lru_cache.LRUCache, 'put') or not hasattr(lru_cache, '_CACHE_SUFFIX'):
        return  # a jax laid out otherwise: without the shared cache rather than with racing writes
    put = lru_cache.LRUCache.put

    def put_whole(self, key, value):
        # jax writes an entry in place (it locks only when it evicts), so the other worker could
        # read half of one; written beside it and renamed, an entry is there whole or not at all.
        if getattr(self, 'eviction_enabled', True):
            return put(self, key, value)
        path = self.path / f'{key}{lru_cache._CACHE_SUFFIX}'
        if path.exists():
            return None
        fd, tmp = tempfile.mkstemp(dir=self.path, suffix='.tmp')
        with os.fdopen(fd, 'wb') as f:
            f.write(value)
        os.replace(tmp, path)
        return None

    lru_cache.LRUCache.put = put_whole
    jax.config.update('jax_compilation_cache_dir', str(config.cache.mkdir('xla')))
    jax.config.update('jax_persistent_cache_min_compile_time_secs', 0.0)
    jax.config.update('jax_persistent_cache_min_entry_size_bytes', 0)


def pytest_configure(config):
    _share_compiled_programs(config)
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
