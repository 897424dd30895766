"""The JITC generator: one matrix on every backend, in both directions, with the advertised statistics."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.jitc import generator as gen
from eventjax.kernels.jitc.jitcmm import _jitcmm
from tests.kernels.conftest import backends_of
from tests.kernels.jitc.dense import LAWS, jitc_dense

BACKENDS = backends_of(_jitcmm.primitive)


class TestOneMatrixEverywhere:
    @pytest.mark.parametrize('law', list(LAWS) + ['normal-odd'])
    def test_todense_is_bit_identical_on_every_backend(self, law):
        weights = (0.3, 0.7) if law == 'normal-odd' else LAWS[law]
        law = law.removesuffix('-odd')
        want = jitc_dense(weights, seed=11, prob=0.2, shape=(25, 40), law=law)
        for backend in BACKENDS:
            A = ej.JITCMatrix(weights, prob=0.2, seed=11, shape=(25, 40), law=law, backend=backend)
            np.testing.assert_array_equal(np.asarray(A.todense()), want, err_msg=backend)
            if law == 'normal':  # under jit too, for the law with the most float operations per weight
                np.testing.assert_array_equal(np.asarray(jax.jit(lambda A: A.todense())(A)), want, err_msg=backend)

    def test_float64_weights_are_bit_identical_too(self):
        want = jitc_dense((0.3, 0.7), seed=7, prob=0.2, shape=(20, 30), law='normal', dtype=np.float64)
        with jax.enable_x64(True):
            for backend in BACKENDS:
                A = ej.JITCMatrix((np.float64(0.3), np.float64(0.7)), prob=0.2, seed=7, shape=(20, 30),
                                  law='normal', backend=backend)
                assert A.dtype == np.float64
                np.testing.assert_array_equal(np.asarray(A.todense()), want, err_msg=backend)

    @pytest.mark.parametrize('backend', BACKENDS)
    def test_x_at_a_is_a_transpose_at_x_on_every_backend(self, backend):
        A = ej.JITCMatrix(LAWS['uniform'], prob=0.2, seed=5, shape=(12, 9), law='uniform', backend=backend)
        x = jnp.asarray(np.random.default_rng(0).normal(size=12), jnp.float32)
        s = ej.EventArray(x > 0)
        np.testing.assert_array_equal(x @ A, A.T @ x)
        np.testing.assert_array_equal(s @ A, A.T @ s)
        np.testing.assert_allclose(x @ A, np.asarray(x) @ np.asarray(A.todense()), rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(np.asarray(A.T.todense()), np.asarray(A.todense()).T)

    def test_the_structure_does_not_depend_on_the_weight_law(self):
        masks = [jitc_dense(LAWS[law], seed=2, prob=0.1, shape=(30, 50), law=law) != 0 for law in LAWS]
        assert masks[0].any()
        np.testing.assert_array_equal(masks[0], masks[1])
        np.testing.assert_array_equal(masks[0], masks[2])

    def test_tocsr_holds_the_same_matrix(self):
        A = ej.JITCMatrix(LAWS['normal'], prob=0.15, seed=9, shape=(20, 30), law='normal')
        np.testing.assert_array_equal(np.asarray(A.tocsr().todense()), np.asarray(A.todense()))
        np.testing.assert_array_equal(np.asarray(A.T.tocsr().todense()), np.asarray(A.todense()).T)


class TestStatistics:
    def test_entries_are_connected_with_probability_prob_in_every_column(self):
        dense = np.asarray(ej.JITCMatrix(1.0, prob=0.1, seed=1, shape=(3000, 200)).todense())
        assert abs(dense.mean() - 0.1) < 0.003
        # Every column, the first included, is connected about as often.
        assert np.all(np.abs(dense.mean(axis=0) - 0.1) < 0.025)

    # Chi-square over the columns of a seeded large draw: each column's count over independent rows
    # is Binomial(rows, 2 / (span + 1)); the statistic must stay below its 99.99% quantile for
    # n_columns degrees of freedom (a fair generator fails 1 run in 10,000). Before the first draw
    # was made stationary, column 0 alone added ~270 at prob 0.5.
    @pytest.mark.parametrize(('prob', 'rows'), [(0.5, 20_000), (0.1, 20_000), (0.02, 50_000)])
    def test_every_column_is_connected_with_the_documented_probability(self, prob, rows):
        scipy_stats = pytest.importorskip('scipy.stats')
        columns = 60
        p = 2 / (gen.span_of(prob) + 1)
        csr = ej.JITCMatrix(1.0, prob=prob, seed=3, shape=(rows, columns)).tocsr()
        counts = np.bincount(np.asarray(csr.indices), minlength=columns)
        z2 = (counts - rows * p) ** 2 / (rows * p * (1 - p))
        assert z2.sum() < scipy_stats.chi2.ppf(0.9999, columns), z2.round(1)

    # The first column alone against its exact law P(k) = 2 (span - k) / (span (span + 1)), over
    # 10**6 rows: sensitive where the column counts are not (the old min of two draws over span
    # values was off by half in the last bin).
    @pytest.mark.parametrize('prob', [0.5, 0.1, 0.02])
    def test_the_first_column_has_the_stationary_law(self, prob):
        scipy_stats = pytest.importorskip('scipy.stats')
        span = gen.span_of(prob)
        key_s, _ = gen.keys(jnp.uint32(3), jnp.arange(10**6, dtype=jnp.uint32))
        first = np.asarray(gen.first_column(key_s, jnp.uint32(span)))
        k = np.arange(span)
        expected = 10**6 * 2 * (span - k) / (span * (span + 1))
        observed = np.bincount(first, minlength=span)
        assert observed.size == span
        assert ((observed - expected) ** 2 / expected).sum() < scipy_stats.chi2.ppf(0.9999, span - 1)

    def test_uniform_and_normal_weights_have_their_moments(self):
        u = np.asarray(ej.JITCMatrix((2.0, 4.0), prob=0.2, seed=3, shape=(200, 500), law='uniform').todense())
        z = np.asarray(ej.JITCMatrix((1.0, 0.5), prob=0.2, seed=3, shape=(200, 500), law='normal').todense())
        u, z = u[u != 0], z[z != 0]
        assert u.min() >= 2.0 and u.max() < 4.0 and abs(u.mean() - 3.0) < 0.02
        assert abs(z.mean() - 1.0) < 0.01 and abs(z.std() - 0.5) < 0.01

    def test_the_expected_nnz_matches_the_count(self):
        A = ej.JITCMatrix(1.0, prob=0.05, seed=4, shape=(400, 1000))
        assert abs(float((np.asarray(A.todense()) != 0).sum()) / A.nnz - 1) < 0.03

    @pytest.mark.parametrize(('prob', 'span'), [(0.0, 0), (1.0, 1), (0.001, 1999), (0.5, 3), (1e-12, gen.MAX_SPAN),
                                               (5e-324, gen.MAX_SPAN)])
    def test_span_of(self, prob, span):
        assert gen.span_of(prob) == span

    def test_different_seeds_give_different_matrices(self):
        a, b = (np.asarray(ej.JITCMatrix(1.0, prob=0.1, seed=s, shape=(20, 30)).todense()) for s in (0, 1))
        assert (a != b).any()
