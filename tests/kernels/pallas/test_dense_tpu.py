"""The dense family's TPU kernels, run in Pallas's TPU interpreter on the cpu, against NumPy."""

import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from tests.kernels.cases import indicator, random_events
from tests.kernels.pallas.helpers import assert_matches
from tests.kernels.pallas.test_dense import CASES, _call
from tests.kernels.pallas.tpu_interpret import BACKEND, tpu_kernel_operators, tpu_kernels_on_cpu


@pytest.fixture(autouse=True, scope='module')
def _tpu_kernels():
    with tpu_kernels_on_cpu():
        yield


def test_both_dense_operators_have_a_tpu_kernel():
    """binary_densemv and binary_densemm each have a pallas kernel for the tpu."""
    assert {'binary_densemv', 'binary_densemm'} <= set(tpu_kernel_operators())


@pytest.mark.parametrize('m, n, cols, transpose, dtype, kind', CASES)
def test_matches_numpy(m, n, cols, transpose, dtype, kind):
    """Each case equals the dense product of the weights with the event indicator."""
    rng = np.random.default_rng(m * 100 + n)
    weights = rng.normal(size=(m, n)).astype(dtype)
    spikes = random_events(rng, ((m if transpose else n),) + (() if cols is None else (cols,)), kind)
    result = _call(jnp.asarray(weights), jnp.asarray(spikes), cols, transpose, BACKEND)
    assert result.dtype == dtype
    dense = np.asarray(weights, np.float64)
    assert_matches(result, (dense.T if transpose else dense) @ indicator(spikes), dtype)


@pytest.mark.parametrize('cols', [None, 2])
@pytest.mark.parametrize('transpose', [False, True])
def test_non_finite_weights_count_only_where_selected(transpose, cols):
    """A NaN or inf weight without an event adds nothing; selected, +inf and -inf together give NaN."""
    w = np.array([[np.nan, 1.0, 2.0], [np.inf, 3.0, -np.inf], [4.0, np.inf, 5.0]], np.float32)
    a = w.T if transpose else w
    events = np.array([[False, True], [True, True], [False, False]])
    spikes = events[:, 0] if cols is None else events
    got = np.asarray(_call(jnp.asarray(w), jnp.asarray(spikes), cols, transpose, BACKEND))
    ind = events[:, :1] if cols is None else events
    want = np.stack([np.where(ind[:, c], a, 0.0).sum(axis=1) for c in range(ind.shape[1])], axis=1)
    np.testing.assert_array_equal(got, want[:, 0] if cols is None else want)


def test_a_wide_batch_of_event_columns_spans_several_words():
    """More than 32 event columns (several 32-bit words of events per row) still match NumPy."""
    rng = np.random.default_rng(3)
    weights = rng.normal(size=(9, 11)).astype(np.float32)
    spikes = rng.random((9, 37)) < 0.3
    got = ej.binary_densemm(jnp.asarray(weights), jnp.asarray(spikes), transpose=True, backend=BACKEND)
    assert_matches(got, weights.astype(np.float64).T @ spikes, np.float32)


@pytest.mark.parametrize('cols', [None, 3])
def test_edge_blocks_past_the_matrix_are_masked(cols):
    """W @ s over more rows and columns than one block: the edge blocks' cells past the matrix add nothing."""
    rng = np.random.default_rng(4)
    weights = rng.normal(size=(300, 530)).astype(np.float32)
    spikes = random_events(rng, (530,) + (() if cols is None else (cols,)), 'bool')
    got = _call(jnp.asarray(weights), jnp.asarray(spikes), cols, False, BACKEND)
    assert_matches(got, weights.astype(np.float64) @ indicator(spikes), np.float32)


@pytest.mark.parametrize('cols', [None, 2])
def test_event_rows_in_several_chunks_of_words(cols, monkeypatch):
    """s @ W with its event words read in chunks of 8 rows (3 chunks, the last one short) matches NumPy."""
    from eventjax.kernels.dense import pallas_impl

    monkeypatch.setattr(pallas_impl, '_WORDS_CHUNK', 8)
    rng = np.random.default_rng(5)
    weights = rng.normal(size=(21, 7)).astype(np.float32)
    spikes = random_events(rng, (21,) + (() if cols is None else (cols,)), 'bool')
    got = _call(jnp.asarray(weights), jnp.asarray(spikes), cols, True, BACKEND)
    assert_matches(got, weights.astype(np.float64).T @ indicator(spikes), np.float32)
