"""The CSR family's TPU kernels, run in Pallas's TPU interpret mode against the jax kernels."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from eventjax.kernels.csr.jax_impl import _product
from eventjax.kernels.csr.pallas_tpu import binary_csrmv_tpu_kernel, csrmv_tpu_kernel


def _case(rng, m, n, lengths, *, transpose, events, homogeneous, matrix=False):
    indptr = jnp.asarray(np.concatenate([[0], np.cumsum(lengths)]), jnp.int32)
    nnz = int(indptr[-1])
    indices = jnp.asarray(rng.integers(-2, n + 2, nnz), jnp.int32)
    data = jnp.asarray(rng.normal(size=1 if homogeneous else nnz), jnp.float32)
    rows = m if transpose else n
    shape = (rows, 2) if matrix else (rows,)
    x = jnp.asarray(rng.random(shape) < 0.3) if events else jnp.asarray(rng.normal(size=shape), jnp.float32)
    return data, indices, indptr, x


def _both(data, indices, indptr, x, *, shape, transpose, events):
    m, n = shape
    rows = (n if transpose else m,) + x.shape[1:]
    kg = binary_csrmv_tpu_kernel if events else csrmv_tpu_kernel
    call = kg(shape=shape, transpose=transpose, outs=(jax.ShapeDtypeStruct(rows, jnp.float32),))
    got = call(data, indices, indptr, x, interpret=True)
    want = _product(data, indices, indptr, x, shape=shape, transpose=transpose, out_dtype=jnp.float32,
                    binary=events)
    return np.asarray(got), np.asarray(want)


@pytest.mark.parametrize('transpose', [True, False])
@pytest.mark.parametrize('events', [True, False])
@pytest.mark.parametrize('homogeneous', [True, False])
def test_rows_of_any_length_match_the_jax_kernel(transpose, events, homogeneous):
    """Rows of 0 to 129 entries start anywhere in the 128-wide layout."""
    rng = np.random.default_rng(0)
    m, n = 23, 290
    lengths = rng.integers(0, 12, m)
    lengths[3], lengths[7] = 129, 128
    args = _case(rng, m, n, lengths, transpose=transpose, events=events, homogeneous=homogeneous)
    got, want = _both(*args, shape=(m, n), transpose=transpose, events=events)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('transpose', [True, False])
def test_equal_rows_and_long_rows(transpose):
    """Equal row lengths take the FCN gather when not transposed; a row over 129 entries is cut in pieces
    when transposed and takes the jax kernel when not."""
    rng = np.random.default_rng(1)
    m, n = 12, 40
    for lengths in (np.full(m, 5), np.r_[np.full(m - 1, 2), 200]):
        args = _case(rng, m, n, lengths, transpose=transpose, events=True, homogeneous=False, matrix=True)
        got, want = _both(*args, shape=(m, n), transpose=transpose, events=True)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize('events', [True, False])
@pytest.mark.parametrize('homogeneous', [True, False])
def test_long_rows_are_cut_into_pieces(events, homogeneous):
    """Rows of 0 to 700 entries (empty rows, exactly 128 and 256, one past) scatter in pieces of 128."""
    rng = np.random.default_rng(2)
    m, n = 11, 333
    lengths = np.array([700, 0, 3, 128, 0, 256, 257, 1, 0, 130, 5])
    args = _case(rng, m, n, lengths, transpose=True, events=events, homogeneous=homogeneous, matrix=not events)
    if events:
        args = args[:3] + (jnp.ones(m, bool).at[1].set(False).at[7].set(False),)
    got, want = _both(*args, shape=(m, n), transpose=True, events=events)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-4)
