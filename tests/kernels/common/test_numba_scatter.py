"""The shared event-row scatter: finding the event rows, and adding their entries on one thread or several."""

import subprocess
import sys

import jax
import numpy as np
import pytest

pytest.importorskip('numba')

import eventjax as ej  # noqa: E402
from eventjax.backends.numba import threading_layer  # noqa: E402
from eventjax.kernels.common.numba import scatter as numba_scatter  # noqa: E402
from eventjax.kernels.common.numba.scatter import (  # noqa: E402
    SCATTER_PARALLEL_MIN_ENTRIES,
    event_rows,
    packed_rows,
    scatter_kernel,
    scatter_spans,
    scatter_spans_threaded,
)
from eventjax.kernels.csr import numba_impl as csr_numba  # noqa: E402
from eventjax.kernels.indexed import numba_impl as indexed_numba  # noqa: E402

# These tests call the threaded scatter directly, not through scatter_kernel: bind the launch hooks it calls.
threading_layer()

N = 3001  # outputs; not a multiple of 64 or 32


@pytest.mark.parametrize('n', [0, 5, 64, 200, 1000])
@pytest.mark.parametrize('where', ['none', 'all', 'edges', 'random'])
def test_event_rows_of_a_bool_vector_are_its_true_entries_in_order(n, where):
    x = np.zeros(n, bool)
    if where == 'all':
        x[:] = True
    elif where == 'edges' and n:
        x[[0, n - 1, min(63, n - 1), min(64, n - 1)]] = True
    elif where == 'random':
        x = np.random.default_rng(n).random(n) < 0.05
    rows = np.full(n, -1, np.int64)
    count = event_rows(x, rows)
    np.testing.assert_array_equal(rows[:count], np.flatnonzero(x))


def test_event_rows_of_a_float_vector_are_its_positive_entries():
    x = np.array([0.0, 1.0, -2.0, np.nan, 3.5, -0.0, np.inf, 1e-30], np.float32)
    rows = np.empty(x.size, np.int64)
    count = event_rows(x, rows)
    np.testing.assert_array_equal(rows[:count], [1, 4, 6, 7])


@pytest.mark.parametrize('m', [1, 31, 32, 33, 100])
def test_packed_rows_are_the_set_bits_below_m(m):
    spikes = np.random.default_rng(m).random(m) < 0.3
    words = np.asarray(ej.bitpack(spikes)).copy()
    words[-1] |= np.uint32(0xFFFFFFFF) << np.uint32(m % 32) if m % 32 else np.uint32(0)  # bits past m: no rows
    rows = np.empty(m, np.int64)
    count = packed_rows(words, m, rows)
    np.testing.assert_array_equal(rows[:count], np.flatnonzero(spikes))


def _problem(rng, rows, k=100, homogeneous=False, permuted=False):
    """``rows`` event rows of ``k`` entries each (spans), bad columns and bad permutation entries among them."""
    nnz = rows * k
    indices = rng.integers(0, N, nnz).astype(np.int32)
    indices[::97] = -3
    indices[::89] = N + 5
    data = rng.standard_normal(1 if homogeneous else nnz).astype(np.float32)
    perm = rng.permutation(nnz).astype(np.int32) if permuted else indices
    if permuted:
        perm[::83] = nnz + 1
    spans = np.stack([np.arange(0, nnz, k), np.arange(k, nnz + 1, k)], axis=1).astype(np.int64)
    return data, indices, perm, spans


def _reference(data, indices, perm, spans, permuted):
    """The sum in float64 with NumPy: every listed entry whose column and weight position are in range."""
    e = np.concatenate([np.arange(a, b) for a, b in spans]) if len(spans) else np.zeros(0, np.int64)
    j = indices[e].astype(np.int64)
    p = np.zeros_like(e) if data.size == 1 else (perm[e].astype(np.int64) if permuted else e)
    ok = (j >= 0) & (j < N) & (p < data.size)
    out = np.zeros(N)
    np.add.at(out, j[ok], data[p[ok]].astype(np.float64))
    return out


@pytest.mark.parametrize('scatter', [scatter_spans, scatter_spans_threaded], ids=['serial', 'threaded'])
@pytest.mark.parametrize('form', ['per-entry', 'homogeneous', 'permuted'])
@pytest.mark.parametrize('rows', [3, SCATTER_PARALLEL_MIN_ENTRIES // 100 + 40])  # below the split; from it
def test_scatter_spans_adds_each_listed_entry_once(form, rows, scatter):
    permuted = form == 'permuted'
    data, indices, perm, spans = _problem(np.random.default_rng(rows), rows, homogeneous=form == 'homogeneous',
                                          permuted=permuted)
    out = np.full(N, np.nan, np.float32)  # the kernel must fill it: the bridge hands it over uninitialised
    scatter(data, indices, perm, spans, spans.shape[0], out, permuted)
    np.testing.assert_allclose(out, _reference(data, indices, perm, spans, permuted), rtol=1e-4, atol=1e-3)


def test_a_split_scatter_gives_the_same_sums_every_call_and_on_one_thread_the_same_values():
    data, indices, perm, spans = _problem(np.random.default_rng(0), 2 * SCATTER_PARALLEL_MIN_ENTRIES // 100)
    first, again, single, serial = (np.empty(N, np.float32) for _ in range(4))
    scatter_spans_threaded(data, indices, perm, spans, spans.shape[0], first, False)
    scatter_spans_threaded(data, indices, perm, spans, spans.shape[0], again, False)
    np.testing.assert_array_equal(first, again)
    ej.backends.numba.set_num_threads(1)
    try:
        scatter_spans_threaded(data, indices, perm, spans, spans.shape[0], single, False)
    finally:
        ej.backends.numba.set_num_threads(None)
    scatter_spans(data, indices, perm, spans, spans.shape[0], serial, False)
    np.testing.assert_allclose(first, single, rtol=1e-5, atol=1e-4)
    np.testing.assert_array_equal(single, serial)  # one thread: the serial scatter's order of sums


@pytest.mark.parametrize('scatter', [scatter_spans, scatter_spans_threaded], ids=['serial', 'threaded'])
def test_only_the_first_count_spans_are_read(scatter):
    data, indices, perm, spans = _problem(np.random.default_rng(1), 10)
    out = np.empty(N, np.float32)
    scatter(data, indices, perm, spans, 4, out, False)
    np.testing.assert_allclose(out, _reference(data, indices, perm, spans[:4], False), rtol=1e-5, atol=1e-5)


class TestKernelChoice:
    def test_only_a_matrix_that_can_hold_the_split_bound_gets_the_threaded_scatter(self):
        side = int(np.ceil(np.sqrt(SCATTER_PARALLEL_MIN_ENTRIES)))
        assert scatter_kernel((side, side), 'serial', 'threaded') == 'threaded'
        assert scatter_kernel((SCATTER_PARALLEL_MIN_ENTRIES, 1), 'serial', 'threaded') == 'threaded'
        assert scatter_kernel((SCATTER_PARALLEL_MIN_ENTRIES - 1, 1), 'serial', 'threaded') == 'serial'
        assert scatter_kernel((0, 10**9), 'serial', 'threaded') == 'serial'

    def test_a_large_matrix_picks_by_the_entries_it_stores(self):
        pick = scatter_kernel((4000, 4000), 'serial', 'threaded', indices=1).pick
        entries = lambda k: jax.ShapeDtypeStruct((k,), np.int32)
        assert pick(None, entries(SCATTER_PARALLEL_MIN_ENTRIES - 1)) == 'serial'
        assert pick(None, entries(SCATTER_PARALLEL_MIN_ENTRIES)) == 'threaded'
        assert scatter_kernel((100, 100), 'serial', 'threaded', indices=1) == 'serial'

    def test_a_process_that_never_splits_a_scatter_never_binds_the_launch_hooks(self):
        code = ('import numpy as np, jax, eventjax as ej\n'
                'from eventjax.backends.numba import threads as numba_threads\n'
                'n = 2000; k = 10; idx = np.tile(np.arange(k, dtype=np.int32), n)\n'
                'got = ej.binary_csrmv(np.ones(n * k, np.float32), idx, np.arange(0, n * k + 1, k, dtype=np.int32),\n'
                '                      np.ones(n, bool), shape=(n, n), transpose=True, backend="numba")\n'
                'assert float(got[0]) == n\n'
                'print(numba_threads._LAUNCHER._hooks is None)\n')
        out = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=300, check=True)
        assert out.stdout.strip().splitlines()[-1] == 'True'

    def test_the_transposed_binary_kernels_pick_by_matrix_size_then_stored_entries(self):
        small, large = (100, 100), (4000, 4000)
        few, many = (jax.ShapeDtypeStruct((n,), np.int32) for n in (320_000, SCATTER_PARALLEL_MIN_ENTRIES))
        assert csr_numba.binary_csrmv_kernel(transpose=True, shape=small, outs=()) is csr_numba._binary_mv_scatter
        pick = csr_numba.binary_csrmv_kernel(transpose=True, shape=large, outs=()).pick
        assert pick(None, few) is csr_numba._binary_mv_scatter
        assert pick(None, many) is csr_numba._binary_mv_scatter_threaded
        for permuted, serial, threaded in ((False, '_scatter', '_scatter_threaded'),
                                           (True, '_scatter_permuted', '_scatter_permuted_threaded')):
            assert indexed_numba.binary_csrmv_indexed_kernel(small, permuted) is getattr(indexed_numba, serial)
            pick = indexed_numba.binary_csrmv_indexed_kernel(large, permuted).pick
            assert pick(None, few) is getattr(indexed_numba, serial)
            assert pick(None, many) is getattr(indexed_numba, threaded)
        packed = indexed_numba.binary_csrmv_packed_kernel
        assert packed(small, 0, True) is indexed_numba._packed_scatter
        assert packed(large, 0, True) is indexed_numba._packed_scatter_threaded
        assert packed((4000, 10), 4000, True) is indexed_numba._packed_scatter_threaded  # FCN: m x k entries
        assert packed(large, 0, False) is indexed_numba._packed_gather


def test_the_threads_are_off_under_boundscheck_only():
    import numba

    assert numba_scatter._THREADS_ALLOWED is not bool(numba.config.BOUNDSCHECK)
