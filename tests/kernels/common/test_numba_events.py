"""The numba kernels' parallel row loops: chosen per call by work, same results as serial ones, on any thread count."""

from __future__ import annotations

import jax
import numpy as np
import pytest

numba = pytest.importorskip('numba')

import eventjax as ej  # noqa: E402
from eventjax.backends.numba.bridge import ByInputs  # noqa: E402
from eventjax.kernels.common.numba import events as numba_events  # noqa: E402
from eventjax.kernels.csr import numba_impl as csr_numba  # noqa: E402
from eventjax.kernels.fcn import numba_impl as fcn_numba  # noqa: E402

# Odd sizes no other test uses, so no earlier lowering of the same call is reused.
M, N, K, B = 43, 37, 5, 3


@pytest.fixture
def parallel_everywhere(monkeypatch):
    """Every kernel call with at least one output row takes the parallel path."""
    monkeypatch.setattr(numba_events, 'PARALLEL_MIN_WORK', 1)
    yield
    ej.backends.numba.set_num_threads(None)


def _problem(seed):
    """An FCN problem with an out-of-range and a negative index, a NaN weight on a non-event column."""
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, N, size=(M, K)).astype(np.int32)
    weights = rng.normal(size=(M, K)).astype(np.float32)
    spikes = rng.random(N) < 0.3
    spikes[0] = False
    indices[0, :2] = N + 3, -2
    indices[1, 0], weights[1, 0] = 0, np.nan
    B2 = rng.random((N, B)) < 0.3
    B2[0] = False
    return weights, indices, spikes, B2


def _csr(weights, indices):
    return weights.ravel(), indices.ravel(), np.arange(0, M * K + 1, K, dtype=np.int32)


def _expected(weights, indices, x, binary):
    """Row sums over in-range connections: the weight where x is an event (binary), else weight * x."""
    keep = (indices >= 0) & (indices < N)
    xs = np.asarray(x, np.float64)[np.where(keep, indices, 0)]
    w = weights.astype(np.float64)
    if xs.ndim == 3:
        keep, w = keep[..., None], w[..., None]
    terms = np.where(keep & (xs > 0), w, 0) if binary else np.where(keep, w * xs, 0)
    return terms.sum(axis=1)


@numba.njit
def _mark_serial(w, x, out):
    out[0] = 1.0


@numba.njit
def _mark_parallel(w, x, out):
    for _ in numba.prange(1):
        out[0] = 2.0


@numba.njit
def _work_is_x0(w, x, out):
    return int(x[0])


class TestChoice:
    def test_each_call_picks_serial_below_the_work_bound_and_parallel_from_it(self):
        kernel = numba_events.by_work(_mark_serial, _mark_parallel, _work_is_x0)
        out = np.zeros(1)
        bound = numba_events.PARALLEL_MIN_WORK
        for work, want in ((0, 1.0), (bound - 1, 1.0), (bound, 2.0), (10 * bound, 2.0)):
            kernel(None, np.array([work]), out)
            assert out[0] == want, work

    def test_the_bound_is_read_when_a_kernel_is_built(self, monkeypatch):
        monkeypatch.setattr(numba_events, 'PARALLEL_MIN_WORK', 1)
        out = np.zeros(1)
        numba_events.by_work(_mark_serial, _mark_parallel, _work_is_x0)(None, np.array([1]), out)
        assert out[0] == 2.0

    def test_a_matrix_too_small_to_reach_the_bound_gets_the_serial_gather_alone(self):
        bound = numba_events.PARALLEL_MIN_WORK
        mv = (jax.ShapeDtypeStruct((64,), np.float32),)
        mm = (jax.ShapeDtypeStruct((64, 16), np.float32),)
        small = csr_numba.binary_csrmv_kernel(transpose=False, shape=(64, bound // 64 - 1), outs=mv)
        assert small is csr_numba._binary_mv_gather
        # The same matrix with a batch of 16 can reach it: chosen per call.
        assert csr_numba.binary_csrmm_kernel(transpose=False, shape=(64, bound // 64 - 1), outs=mm) \
            is not csr_numba._binary_mm_gather
        large = fcn_numba.binary_fcnmv_kernel(transpose=False, shape=(64, bound // 64), outs=mv)
        assert 'launch_begin' in large.py_func.__code__.co_names

    def test_scatters_stay_serial(self):
        # Scatters write shared output rows: never the parallel variant.
        outs = (jax.ShapeDtypeStruct((10**6,), np.float32),)
        for factory in (csr_numba.binary_csrmv_kernel, fcn_numba.binary_fcnmv_kernel, csr_numba.csrmm_kernel):
            for kernel in _candidates(factory(transpose=True, shape=(10**6, 10**6), outs=outs)):
                assert not kernel.targetoptions.get('parallel')
                assert 'launch_begin' not in kernel.py_func.__code__.co_names


def _candidates(kernel):
    """Every njit kernel a generator's result can run: a kernel picked from the inputs has one per entry count."""
    if not isinstance(kernel, ByInputs):
        return [kernel]
    picked = []
    for stored in (10, 2**21):
        arrays = [jax.ShapeDtypeStruct((stored,), np.int32)] * 4
        picked.append(kernel.pick(*arrays))
    return picked


@pytest.mark.usefixtures('parallel_everywhere')
class TestParallelResults:
    """One parallel kernel per shared row loop (each parallel kernel costs seconds to compile)."""

    @pytest.mark.parametrize('threads', [1, 2])
    def test_binary_gathers_match_the_reference(self, threads):
        ej.backends.numba.set_num_threads(threads)
        weights, indices, spikes, B2 = _problem(0)
        want = _expected(weights, indices, spikes, True)
        assert np.isfinite(want).all()  # the NaN weight sits on a non-event column
        data, ind, indptr = _csr(weights, indices)
        got = ej.binary_csrmv(data, ind, indptr, spikes, shape=(M, N), backend='numba', validate=False)
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)
        got = ej.binary_fcnmm(weights, indices, B2, shape=(M, N), backend='numba', validate=False)
        np.testing.assert_allclose(np.asarray(got), _expected(weights, indices, B2, True), rtol=1e-5, atol=1e-5)

    def test_float_gather_matches_the_reference(self):
        weights, indices, _, _ = _problem(1)
        weights[1, 0] = 0.5
        v = np.random.default_rng(2).normal(size=N).astype(np.float32)
        got = ej.fcnmv(weights, indices, v, shape=(M, N), backend='numba', validate=False)
        np.testing.assert_allclose(np.asarray(got), _expected(weights, indices, v, False), rtol=1e-5, atol=1e-5)

    def test_dense_matches_the_reference(self):
        rng = np.random.default_rng(3)
        w = rng.normal(size=(M, N)).astype(np.float32)
        spikes = rng.random(N) < 0.3
        np.testing.assert_allclose(np.asarray(ej.binary_densemv(w, spikes, backend='numba')),
                                   w.astype(np.float64) @ spikes, rtol=1e-5, atol=1e-5)

    # The parallel gathers the tests above leave out. Every row of the problem has in-range
    # connections, the last one included, so a parallel loop that skips a row changes the result.
    @pytest.mark.parametrize('op', ['csrmv', 'csrmm', 'binary_csrmm', 'fcnmm', 'binary_fcnmv', 'binary_densemm'])
    def test_every_other_parallel_gather_matches_the_reference(self, op):
        weights, indices, spikes, B2 = _problem(5)
        weights[1, 0] = 0.5
        rng = np.random.default_rng(6)
        v = rng.normal(size=N).astype(np.float32)
        V = rng.normal(size=(N, B)).astype(np.float32)
        data, ind, indptr = _csr(weights, indices)
        kw = dict(shape=(M, N), backend='numba', validate=False)
        if op == 'binary_densemm':
            w = rng.normal(size=(M, N)).astype(np.float32)
            got, want = ej.binary_densemm(w, B2, backend='numba'), w.astype(np.float64) @ B2
        else:
            x = {'csrmv': v, 'csrmm': V, 'binary_csrmm': B2, 'fcnmm': V, 'binary_fcnmv': spikes}[op]
            operands = (data, ind, indptr) if op.startswith(('csr', 'binary_csr')) else (weights, indices)
            got, want = getattr(ej, op)(*operands, x, **kw), _expected(weights, indices, x, op.startswith('binary'))
        assert np.all(want[-1] != 0), 'the last row must count'
        np.testing.assert_allclose(np.asarray(got), want, rtol=1e-5, atol=1e-5)

    def test_the_thread_count_changes_no_result(self):
        weights, indices, spikes, _ = _problem(4)
        data, ind, indptr = _csr(weights, indices)
        results = []
        for threads in (1, 2):
            ej.backends.numba.set_num_threads(threads)
            results.append(np.asarray(ej.binary_csrmv(data, ind, indptr, spikes, shape=(M, N), backend='numba',
                                                      validate=False)))
        np.testing.assert_array_equal(results[0], results[1])
