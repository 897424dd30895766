"""The binary vector scatters of CSR and FCN past ``PREFETCH_MIN_ENTRIES``, where they prefetch rows ahead.

Smaller matrices never take that path, so these use just enough stored
entries (about 17 MB of indices) and compare with a NumPy scatter: the
hints must change no result, whatever the events (none, fewer than the
rows looked ahead, the first and last rows) and bad columns.
"""

import numpy as np
import pytest

pytest.importorskip('numba')

from eventjax.kernels.common.numba.events import PREFETCH_MIN_ENTRIES, ROWS_AHEAD  # noqa: E402
from eventjax.kernels.csr import numba_impl as csr  # noqa: E402
from eventjax.kernels.fcn import numba_impl as fcn  # noqa: E402

K = 50
M = PREFETCH_MIN_ENTRIES // K + 7  # rows: the entries just pass the bound
N = 3000

EVENTS = {
    'none': [],
    'fewer_than_ahead': list(range(ROWS_AHEAD)),
    'first_and_last': [0, M - 1],
    'consecutive_then_scattered': [5, 6, 7, 8, 1000, M // 2, M - 2],
    'random': 'random',
}


@pytest.fixture(scope='module')
def network():
    rng = np.random.default_rng(7)
    cols = rng.integers(0, N, size=(M, K), dtype=np.int32)
    cols[::97, 3] = -4  # dropped: negative
    cols[::89, 7] = N + 11  # dropped: past the last column
    return cols, rng.standard_normal((M, K), dtype=np.float32)


def _spikes(which, rng):
    spikes = np.zeros(M, bool)
    if which == 'random':
        spikes[rng.random(M) < 0.02] = True
    else:
        spikes[which] = True
    return spikes


def _csr_scatter(cols):
    """The kernel a matrix of this size and these entries gets (the one whose large calls run on numba's threads)."""
    return csr.binary_csrmv_kernel(transpose=True, shape=(M, N), outs=()).pick(None, cols.ravel())


def _reference(cols, w, spikes):
    """out[c] += w over the entries of the event rows whose column c lies in [0, N), in float64."""
    sel_cols, sel_w = cols[spikes].ravel(), np.broadcast_to(w, cols.shape)[spikes].ravel()
    ok = (sel_cols >= 0) & (sel_cols < N)
    out = np.zeros(N)
    np.add.at(out, sel_cols[ok], sel_w[ok].astype(np.float64))
    return out


@pytest.mark.parametrize('homogeneous', [False, True])
@pytest.mark.parametrize('which', list(EVENTS))
def test_csr_scatter_matches_numpy(network, which, homogeneous):
    cols, w = network
    assert cols.size >= PREFETCH_MIN_ENTRIES
    spikes = _spikes(EVENTS[which], np.random.default_rng(1))
    w = w[:1, :1] if homogeneous else w
    indptr = np.arange(0, M * K + 1, K, dtype=np.int32)
    out = np.full(N, np.nan, np.float32)  # the kernel must fill it: the bridge hands it over uninitialised
    _csr_scatter(cols)(w.ravel(), cols.ravel(), indptr, spikes, out, np.zeros(8, np.uint8))
    np.testing.assert_allclose(out, _reference(cols, w, spikes), rtol=1e-5, atol=1e-4)


def test_csr_scatter_repairs_indptr_before_looking_ahead(network):
    """A decreasing and overlong ``indptr`` is repaired (``cummax(clip(...))``) before any row is read or prefetched."""
    cols, w = network
    indptr = np.arange(0, M * K + 1, K, dtype=np.int32)
    indptr[10] = indptr[9] - 3 * K  # row 9 runs backwards: repaired to empty
    indptr[-1] = M * K + 10_000  # past the end: clipped to nnz
    spikes = np.ones(M, bool)
    out = np.empty(N, np.float32)
    _csr_scatter(cols)(w.ravel(), cols.ravel(), indptr, spikes, out, np.zeros(8, np.uint8))
    fixed = np.maximum.accumulate(np.clip(indptr.astype(np.int64), 0, M * K))
    kept = np.zeros(M * K, bool)  # every row holds an event: every entry of a repaired row counts
    kept[fixed[0]:fixed[-1]] = True
    ok = kept & (cols.ravel() >= 0) & (cols.ravel() < N)
    want = np.zeros(N)
    np.add.at(want, cols.ravel()[ok], w.ravel()[ok].astype(np.float64))
    np.testing.assert_allclose(out, want, rtol=1e-4, atol=1e-2)


@pytest.mark.parametrize('homogeneous', [False, True])
@pytest.mark.parametrize('which', list(EVENTS))
def test_fcn_scatter_matches_numpy(network, which, homogeneous):
    cols, w = network
    spikes = _spikes(EVENTS[which], np.random.default_rng(2))
    w = w[:1, :1] if homogeneous else w
    out = np.full(N, np.nan, np.float32)
    kernel = fcn.binary_fcnmv_kernel(transpose=True, shape=(M, N), outs=()).pick(w, cols, spikes)
    assert kernel is fcn._binary_mv_scatter_prefetching
    kernel(w, cols, spikes, out, np.zeros(8, np.uint8))
    np.testing.assert_allclose(out, _reference(cols, w, spikes), rtol=1e-5, atol=1e-4)
