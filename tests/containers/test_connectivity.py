"""Random connectivity is reproducible from a key and has the structure it promises."""

import jax
import numpy as np
import pytest

import eventjax as ej


class TestRandomFixedNumConn:
    def test_the_same_key_gives_the_same_matrix(self):
        a = ej.random_fixed_num_conn(jax.random.key(3), 20, 30, 5)
        b = ej.random_fixed_num_conn(jax.random.key(3), 20, 30, 5)
        c = ej.random_fixed_num_conn(jax.random.key(4), 20, 30, 5)
        assert np.array_equal(a.indices, b.indices) and not np.array_equal(a.indices, c.indices)

    def test_rows_hold_k_distinct_targets_and_no_self_connection(self):
        A = ej.random_fixed_num_conn(jax.random.key(0), 30, 30, 29, allow_self=False).validate()
        idx = np.asarray(A.indices)
        assert all(len(set(row)) == 29 for row in idx)
        assert not np.any(idx == np.arange(30)[:, None])

    def test_weights_are_shared_per_entry_or_drawn(self):
        assert ej.random_fixed_num_conn(jax.random.key(0), 4, 6, 2, weight=0.5).weights.shape == (1,)
        drawn = ej.random_fixed_num_conn(jax.random.key(0), 4, 6, 2, weight=lambda k, s: jax.random.uniform(k, s))
        assert drawn.weights.shape == (4, 2)
        with pytest.raises(ValueError, match='weight must be'):
            ej.random_fixed_num_conn(jax.random.key(0), 4, 6, 2, weight=np.ones(3))

    def test_too_many_targets_are_refused(self):
        with pytest.raises(ValueError, match='k must be at most 5'):
            ej.random_fixed_num_conn(jax.random.key(0), 6, 6, 6, allow_self=False)


class TestRandomCsr:
    def test_the_same_key_gives_the_same_matrix(self):
        a = ej.random_csr(jax.random.key(5), 10, 12, 0.3)
        b = ej.random_csr(jax.random.key(5), 10, 12, 0.3)
        assert np.array_equal(a.indices, b.indices) and np.array_equal(a.indptr, b.indptr)

    def test_the_density_follows_prob_and_self_connections_can_be_excluded(self):
        A = ej.random_csr(jax.random.key(0), 100, 100, 0.2, allow_self=False).validate()
        dense = np.asarray(A.todense())
        assert 0.15 < (dense != 0).mean() < 0.25 and not np.any(np.diag(dense))

    def test_prob_outside_0_1_is_refused(self):
        with pytest.raises(ValueError, match='prob must lie in'):
            ej.random_csr(jax.random.key(0), 3, 3, 1.5)

    @pytest.mark.parametrize('prob', ['0.1', np.array([0.1, 0.2]), [0.1]])
    def test_prob_that_is_not_one_number_gets_eventjaxs_error(self, prob):
        with pytest.raises(TypeError, match=r'random_csr\(\): prob must be one number in \[0, 1\]'):
            ej.random_csr(jax.random.key(0), 3, 3, prob)

    def test_under_jit_it_says_it_runs_eagerly(self):
        with pytest.raises(TypeError, match='runs eagerly only'):
            jax.jit(lambda p: ej.random_csr(jax.random.key(0), 3, 3, p))(0.1)

    @pytest.mark.parametrize('allow_self', [True, False])
    @pytest.mark.parametrize('m, n', [(300, 200), (200, 300), (1, 1), (0, 5), (5, 0)])
    def test_each_connection_is_an_independent_coin_flip(self, m, n, allow_self):
        # Counts per row are Binomial(allowed columns, prob): mean and variance
        # match; columns of a row are sorted and distinct; no diagonal without self.
        A = ej.random_csr(jax.random.key(1), m, n, 0.25, allow_self=allow_self)
        cols, ptr = np.asarray(A.indices), np.asarray(A.indptr)
        assert ptr.shape == (m + 1,) and ptr[0] == 0 and ptr[-1] == cols.size
        rows = np.repeat(np.arange(m), np.diff(ptr))
        assert np.all((cols >= 0) & (cols < max(n, 1)))
        assert np.all((np.diff(cols) > 0) | (np.diff(rows) > 0))
        if not allow_self:
            assert not np.any(rows == cols)
        if m * n < 100:
            return
        allowed = m * n - (0 if allow_self else min(m, n))
        assert abs(cols.size / allowed - 0.25) < 0.01
        per_row = np.diff(ptr) / (n - (0 if allow_self else 1))
        assert abs(per_row.var() * (n - (0 if allow_self else 1)) - 0.25 * 0.75) < 0.04

    def test_a_wide_sparse_network_draws_only_its_connections(self):
        # A dense draw would need 1e11 coin flips (100 GB of mask); geometric gaps draw ~1e4.
        A = ej.random_csr(jax.random.key(2), 100_000, 1_000_000, 1e-7)
        assert 9_000 < A.indices.shape[0] < 11_000 and A.indptr.shape == (100_001,)


class TestRandomFixedNumConnScales:
    def test_a_wide_network_needs_memory_in_proportion_to_connections_not_to_m_times_n(self):
        # m * n = 4e9 entries: a dense draw would need 16 GB; k per row needs 40 kB.
        A = ej.random_fixed_num_conn(jax.random.key(3), 2_000, 2_000_000, 5)
        idx = np.asarray(A.indices)
        assert idx.shape == (2_000, 5) and idx.min() >= 0 and idx.max() < 2_000_000
        assert all(len(set(row)) == 5 for row in idx)

    def test_every_k_subset_is_equally_likely(self):
        # n = 5, k = 2: ten subsets, 20,000 rows, so about 2,000 each.
        idx = np.asarray(ej.random_fixed_num_conn(jax.random.key(4), 20_000, 5, 2).indices)
        counts = np.unique(idx, axis=0, return_counts=True)[1]
        assert len(counts) == 10 and counts.min() > 1_800 and counts.max() < 2_200

    def test_without_self_connections_each_row_still_has_k_distinct_other_targets(self):
        idx = np.asarray(ej.random_fixed_num_conn(jax.random.key(5), 6, 4, 3, allow_self=False).indices)
        for r, row in enumerate(idx):
            assert len(set(row)) == 3 and (r >= 4 or r not in row)
