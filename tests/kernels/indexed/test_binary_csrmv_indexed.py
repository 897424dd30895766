"""binary_csrmv_indexed and the index-list conversions agree with a dense NumPy product on every backend."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej

M, N, NNZ = 9, 6, 30


def problem(seed=0, *, homogeneous=False, permuted=True, dtype=np.float32, long_row=False):
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.integers(0, NNZ + 1, M - 1))
    if long_row:
        cuts[:] = 0  # row M-1 holds every entry: longer than the jax kernel's static width
    indptr = np.concatenate([[0], cuts, [NNZ]]).astype(np.int32)
    indices = rng.integers(0, N, NNZ).astype(np.int32)
    data = (np.array([1.5]) if homogeneous else rng.integers(-8, 9, NNZ) / 4).astype(dtype)
    perm = rng.permutation(NNZ).astype(np.int32) if permuted else None
    return data, indices, indptr, perm


def dense(data, indices, indptr, perm):
    A = np.zeros((M, N))
    for i in range(M):
        for k in range(indptr[i], indptr[i + 1]):
            w = data[0] if data.shape[0] == 1 else data[k if perm is None else perm[k]]
            A[i, indices[k]] += float(w)
    return A


def times(ids, count, size):
    t = np.zeros(size)
    for j in np.asarray(ids)[: int(count)]:
        if 0 <= j < size:
            t[j] += 1
    return t


BACKENDS = ej.get_registry()['binary_csrmv_indexed'].available_backends('cpu')


@pytest.mark.parametrize('backend', BACKENDS)
class TestEveryBackend:
    @pytest.mark.parametrize('homogeneous,permuted', [(False, True), (False, False), (True, True)])
    def test_listed_rows_give_the_dense_product_eager_and_jitted(self, backend, homogeneous, permuted):
        data, indices, indptr, perm = problem(1, homogeneous=homogeneous, permuted=permuted)
        ids, count = jnp.array([4, 0, 8, 4, 99, -1, 2], jnp.int32), jnp.int32(6)  # 4 twice; 99, -1 ignored
        want = times(ids, count, M) @ dense(data, indices, indptr, perm)
        f = lambda d, i: ej.binary_csrmv_indexed(d, indices, indptr, perm, (i, count), shape=(M, N),
                                                  transpose=True, backend=backend)
        np.testing.assert_allclose(f(data, ids), want, rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(jax.jit(f)(data, ids), want, rtol=1e-6, atol=1e-6)

    def test_a_row_longer_than_the_static_width_is_still_summed(self, backend):
        data, indices, indptr, perm = problem(2, long_row=True)
        ids, count = ej.compact_events(jnp.arange(M) == M - 1, 3)
        got = ej.binary_csrmv_indexed(data, indices, indptr, perm, (ids, count), shape=(M, N), transpose=True,
                                      backend=backend)
        np.testing.assert_allclose(got, dense(data, indices, indptr, perm)[M - 1], rtol=1e-6, atol=1e-6)

    def test_a_nan_weight_of_an_unlisted_row_adds_nothing(self, backend):
        data, indices, indptr, perm = problem(3, permuted=False)
        data[indptr[1]:] = np.nan  # every row but row 0
        got = ej.binary_csrmv_indexed(data, indices, indptr, None, (jnp.array([0, 0], jnp.int32), 1),
                                      shape=(M, N), transpose=True, backend=backend)
        np.testing.assert_allclose(got, dense(data, indices, indptr, None)[0] if indptr[1] else np.zeros(N))

    def test_float16_weights_sum_in_float32(self, backend):
        data = np.full(NNZ, 1000.0, np.float16)
        indices, indptr = np.zeros(NNZ, np.int32), np.array([0] + [NNZ] * M, np.int32)
        got = ej.binary_csrmv_indexed(data, indices, indptr, None, (jnp.array([0], jnp.int32), 1), shape=(M, N),
                                      transpose=True, backend=backend)
        assert got.dtype == jnp.float16 and float(got[0]) == 30000.0

    def test_the_weight_gradient_sums_the_cotangent_into_each_permuted_weight(self, backend):
        data, indices, indptr, perm = problem(4)
        ids, count = ej.compact_events(np.isin(np.arange(M), [1, 5, 7]), 4)
        ct = np.linspace(-1, 1, N).astype(np.float32)
        loss = lambda d: jnp.sum(ej.binary_csrmv_indexed(d, indices, indptr, perm, (ids, count), shape=(M, N),
                                                         transpose=True, backend=backend) * ct)
        grad, want = jax.jit(jax.grad(loss))(data), np.zeros(NNZ)
        for i in (1, 5, 7):
            for k in range(indptr[i], indptr[i + 1]):
                want[perm[k]] += ct[indices[k]]
        np.testing.assert_allclose(grad, want, rtol=1e-6, atol=1e-6)
        eps = np.zeros(NNZ, np.float32)
        eps[perm[indptr[5]]] = 1.0 if indptr[6] > indptr[5] else 0.0
        _, tangent = jax.jvp(loss, (data,), (eps,))
        np.testing.assert_allclose(tangent, float(want @ eps), rtol=1e-6, atol=1e-6)

    def test_overflow_under_jit_makes_every_entry_nan(self, backend):
        data, indices, indptr, perm = problem(5)
        f = jax.jit(lambda s: ej.binary_csrmv_indexed(data, indices, indptr, perm, ej.compact_events(s, 2),
                                                      shape=(M, N), transpose=True, backend=backend))
        assert np.isnan(f(jnp.ones(M, bool))).all()
        assert not np.isnan(f(jnp.arange(M) < 2)).any()

    def test_vmap_over_index_lists(self, backend):
        data, indices, indptr, perm = problem(6)
        ids = jnp.array([[0, 3, 9], [8, 8, 9]], jnp.int32)
        counts = jnp.array([2, 2], jnp.int32)
        got = jax.vmap(lambda i, c: ej.binary_csrmv_indexed(data, indices, indptr, perm, (i, c), shape=(M, N),
                                                            transpose=True, backend=backend))(ids, counts)
        A = dense(data, indices, indptr, perm)
        np.testing.assert_allclose(got, [times(i, 2, M) @ A for i in np.asarray(ids)], rtol=1e-6, atol=1e-6)


def test_events_on_columns_give_the_dense_product():
    data, indices, indptr, perm = problem(7)
    spikes = np.array([1, 0, 1, 1, 0, 0], bool)
    got = ej.binary_csrmv_indexed(data, indices, indptr, perm, spikes, shape=(M, N))
    np.testing.assert_allclose(got, dense(data, indices, indptr, perm) @ spikes, rtol=1e-6, atol=1e-6)


def test_a_spike_vector_is_compacted_and_multiplied_like_its_list():
    data, indices, indptr, perm = problem(8)
    spikes = np.arange(M) % 3 == 0
    got = ej.binary_csrmv_indexed(data, indices, indptr, perm, spikes, shape=(M, N), transpose=True)
    np.testing.assert_allclose(got, spikes @ dense(data, indices, indptr, perm), rtol=1e-6, atol=1e-6)


class TestCompaction:
    def test_compact_then_expand_is_the_identity(self):
        spikes = np.array([0.0, 2.0, -1.0, np.nan, 1.0, np.inf])
        ids, count = ej.compact_events(spikes, 4)
        assert ids.tolist() == [1, 4, 5, 6] and int(count) == 3
        assert ej.expand_events(ids, count, 6).tolist() == [False, True, False, False, True, True]

    def test_an_eager_overflow_raises_naming_the_needed_capacity(self):
        with pytest.raises(ValueError, match='3 events do not fit in capacity 2.*at least 3'):
            ej.compact_events(np.array([True, True, True]), 2)

    def test_a_traced_overflow_keeps_the_true_count(self):
        ids, count = jax.jit(lambda s: ej.compact_events(s, 2))(jnp.ones(5, bool))
        assert ids.tolist() == [0, 1] and int(count) == 5

    def test_a_bad_capacity_is_a_type_error(self):
        with pytest.raises(TypeError, match='capacity must be a non-negative Python int'):
            ej.compact_events(np.array([True]), 1.5)

    def test_a_numpy_integer_capacity_is_a_capacity(self):
        ids, count = ej.compact_events(np.array([True, False, True]), np.int64(3) - 1)
        assert ids.tolist() == [0, 2] and int(count) == 2
        assert ej.EventArray(np.array([True, False])).compact(np.int32(1)).capacity == 1

    def test_a_bad_permutation_entry_is_named(self):
        data, indices, indptr, perm = problem(9)
        perm[3] = NNZ
        with pytest.raises(ValueError, match=r'perm\[3\] = 30 is outside \[0, 30\)'):
            ej.binary_csrmv_indexed(data, indices, indptr, perm, np.ones(M, bool), shape=(M, N), transpose=True)
