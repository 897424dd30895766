"""The bit-packed products agree with a dense NumPy product on every backend, both directions, CSR and FCN."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej

M, N, K = 40, 37, 4  # not multiples of 32: the last word is partly padding
BACKENDS = ej.get_registry()['binary_csrmv_packed'].available_backends('cpu')


def csr(seed):
    rng = np.random.default_rng(seed)
    nnz = 150
    indptr = np.concatenate([[0], np.sort(rng.integers(0, nnz + 1, M - 1)), [nnz]]).astype(np.int32)
    indices = rng.integers(0, N, nnz).astype(np.int32)
    data = (rng.integers(-8, 9, nnz) / 4).astype(np.float32)
    A = np.zeros((M, N))
    for i in range(M):
        np.add.at(A[i], indices[indptr[i]:indptr[i + 1]], data[indptr[i]:indptr[i + 1]])
    return data, indices, indptr, A


def fcn(seed):
    rng = np.random.default_rng(seed)
    indices = rng.integers(0, N, (M, K)).astype(np.int32)
    weights = rng.normal(size=(M, K)).astype(np.float32)
    A = np.zeros((M, N))
    for i in range(M):
        np.add.at(A[i], indices[i], weights[i])
    return weights, indices, A


def spikes(seed, size):
    return np.random.default_rng(seed).random(size) < 0.3


@pytest.mark.parametrize('backend', BACKENDS)
@pytest.mark.parametrize('transpose', [True, False])
class TestEveryBackend:
    def test_csr_gives_the_product_of_the_unpacked_events(self, backend, transpose):
        data, indices, indptr, A = csr(1)
        s = spikes(1, M if transpose else N)
        f = jax.jit(lambda d, w: ej.binary_csrmv_packed(d, indices, indptr, w, shape=(M, N), transpose=transpose,
                                                        backend=backend))
        np.testing.assert_allclose(f(data, ej.bitpack(s)), s @ A if transpose else A @ s, rtol=1e-5, atol=1e-5)

    def test_fcn_gives_the_product_of_the_unpacked_events(self, backend, transpose):
        weights, indices, A = fcn(2)
        s = spikes(2, M if transpose else N)
        got = ej.binary_fcnmv_packed(weights, indices, ej.bitpack(s), shape=(M, N), transpose=transpose,
                                     backend=backend)
        np.testing.assert_allclose(got, s @ A if transpose else A @ s, rtol=1e-5, atol=1e-5)

    def test_padding_bits_past_the_event_side_are_ignored(self, backend, transpose):
        data, indices, indptr, A = csr(3)
        size = M if transpose else N
        s = spikes(3, size)
        words = np.asarray(ej.bitpack(s)).copy()
        words[-1] |= np.uint32(0xFFFFFFFF) << np.uint32(size % 32)  # garbage past the last neuron
        got = ej.binary_csrmv_packed(data, indices, indptr, words, shape=(M, N), transpose=transpose,
                                     backend=backend)
        np.testing.assert_allclose(got, s @ A if transpose else A @ s, rtol=1e-5, atol=1e-5)

    def test_the_weight_gradient_is_the_cotangent_at_entries_with_an_event(self, backend, transpose):
        weights, indices, A = fcn(4)
        s = spikes(4, M if transpose else N)
        ct = np.linspace(-1, 1, N if transpose else M).astype(np.float32)
        loss = lambda w: jnp.sum(ej.binary_fcnmv_packed(w, indices, ej.bitpack(s), shape=(M, N),
                                                        transpose=transpose, backend=backend) * ct)
        rows = np.repeat(np.arange(M)[:, None], K, 1)
        want = s[rows] * ct[indices] if transpose else s[indices] * ct[rows]
        np.testing.assert_allclose(jax.jit(jax.grad(loss))(weights), want, rtol=1e-5, atol=1e-5)


def test_vmap_over_packed_events():
    data, indices, indptr, A = csr(5)
    S = np.stack([spikes(5, M), spikes(6, M)])
    got = jax.vmap(lambda w: ej.binary_csrmv_packed(data, indices, indptr, w, shape=(M, N), transpose=True))(
        ej.bitpack(S, axis=1))
    np.testing.assert_allclose(got, S @ A, rtol=1e-5, atol=1e-5)


def test_a_wrong_number_of_words_names_the_length():
    data, indices, indptr, _ = csr(7)
    with pytest.raises(ValueError, match=r'ceil\(40 / 32\) = 2'):
        ej.binary_csrmv_packed(data, indices, indptr, np.zeros(3, np.uint32), shape=(M, N), transpose=True)
    with pytest.raises(TypeError, match='uint32'):
        ej.binary_csrmv_packed(data, indices, indptr, np.zeros(2, np.int32), shape=(M, N), transpose=True)


@pytest.mark.parametrize('layout', ['uniform', 'padded', 'one long row'])
def test_jax_row_layouts_give_the_dense_product(layout):
    """Without ``transpose`` the jax kernel picks a layout at run time; each gives the dense product."""
    rng = np.random.default_rng(4)
    lengths = np.full(M, 4)
    if layout == 'padded':
        lengths = rng.integers(2, 6, M)
    elif layout == 'one long row':
        lengths[7] = 30  # beyond the padded width: the oracle's path
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    indices = rng.integers(0, N, indptr[-1]).astype(np.int32)
    data = rng.normal(size=indptr[-1]).astype(np.float32)
    A = np.zeros((M, N))
    for i in range(M):
        np.add.at(A[i], indices[indptr[i]:indptr[i + 1]], data[indptr[i]:indptr[i + 1]])
    s = spikes(4, N)
    got = jax.jit(lambda w: ej.binary_csrmv_packed(data, indices, indptr, w, shape=(M, N), backend='jax'))(
        ej.bitpack(s))
    np.testing.assert_allclose(got, A @ s, rtol=1e-5, atol=1e-5)
