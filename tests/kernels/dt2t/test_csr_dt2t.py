"""The per-synapse products agree with dense NumPy on every backend: eager, jit, vmap, jvp and grad."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.compat import legacy
from tests.extras import UNITS_EXTRA

M, N, NNZ, BATCH = 7, 6, 24, 3
BACKENDS = ej.get_registry()['csr_dt2t'].available_backends('cpu')
TOL = {np.float16: 2e-3, np.float32: 1e-6, np.float64: 1e-12}


def structure(seed=0, nnz=NNZ, m=M, n=N):
    rng = np.random.default_rng(seed)
    cuts = np.sort(rng.integers(0, nnz + 1, m - 1)) if m else np.zeros(0, int)
    indptr = np.concatenate([[0], cuts, [nnz]]).astype(np.int32)[: m + 1]
    indices = rng.integers(0, n, nnz).astype(np.int32)
    return indices, indptr


def entry_rows(indptr, nnz):
    rows = np.full(nnz, -1)
    for i in range(len(indptr) - 1):
        rows[indptr[i]:indptr[i + 1]] = i
    return rows


def want(y, w, indices, indptr, transpose):
    """out[b, e] = w[b, e] * y[b, row(e)] (y[b, col(e)] when transpose), in float64."""
    y, w = np.asarray(y, np.float64), np.asarray(w, np.float64)
    pos = indices if transpose else entry_rows(indptr, indices.shape[0])
    return w * y[..., pos]


def values(seed, shape, dtype):
    return (np.random.default_rng(seed).integers(-8, 9, shape) / 4).astype(dtype)


@pytest.mark.parametrize('backend', BACKENDS)
class TestEveryBackend:
    @pytest.mark.parametrize('dtype,transpose', [(np.float32, False), (np.float32, True), (np.float16, False),
                                                 (np.float64, True)])
    def test_mv_is_each_weight_times_its_row_or_column_eager_and_jitted(self, backend, transpose, dtype):
        indices, indptr = structure(1)
        y, w = values(2, N if transpose else M, dtype), values(3, NNZ, dtype)
        f = lambda y, w: ej.csrmv_dt2t(y, w, indices, indptr, shape=(M, N), transpose=transpose, backend=backend)
        with jax.enable_x64(dtype == np.float64):
            for got in (f(y, w), jax.jit(f)(y, w)):
                assert got.dtype == dtype and got.shape == (NNZ,)
                np.testing.assert_allclose(got, want(y, w, indices, indptr, transpose), rtol=TOL[dtype])

    @pytest.mark.parametrize('transpose', [False, True])
    def test_bool_y_selects_the_weights_of_the_events(self, backend, transpose):
        indices, indptr = structure(4)
        y = np.random.default_rng(5).random((BATCH, N if transpose else M)) < 0.4
        w = values(6, (BATCH, NNZ), np.float32)
        w[0, 0] = np.nan  # a NaN weight without an event gives 0, not NaN
        got = ej.csrmm_dt2t(y, w, indices, indptr, shape=(M, N), transpose=transpose, backend=backend)
        np.testing.assert_array_equal(got, np.where(want(y, np.ones_like(w), indices, indptr, transpose) > 0, w, 0))

    @pytest.mark.parametrize('transpose', [False, True])
    def test_mm_is_one_mv_per_batch_row_and_shares_a_1d_w(self, backend, transpose):
        indices, indptr = structure(7)
        y = values(8, (BATCH, N if transpose else M), np.float32)
        w = values(9, (BATCH, NNZ), np.float32)
        mm = lambda w: ej.csrmm_dt2t(y, w, indices, indptr, shape=(M, N), transpose=transpose, backend=backend)
        np.testing.assert_allclose(mm(w), want(y, w, indices, indptr, transpose), rtol=1e-6)
        np.testing.assert_allclose(mm(w[0]), want(y, np.broadcast_to(w[0], w.shape), indices, indptr, transpose),
                                   rtol=1e-6)
        np.testing.assert_allclose(mm(2.0), want(y, np.full(w.shape, 2.0), indices, indptr, transpose), rtol=1e-6)

    def test_empty_structure_rows_and_batches_give_empty_or_zero_results(self, backend):
        indices, indptr = structure(10, nnz=0)
        assert ej.csrmv_dt2t(jnp.ones(M), jnp.ones(0), indices, indptr, shape=(M, N), backend=backend).shape == (0,)
        assert ej.csrmm_dt2t(jnp.ones((0, M)), jnp.ones((0, 0)), indices, indptr, shape=(M, N),
                             backend=backend).shape == (0, 0)
        got = ej.csrmv_dt2t(jnp.ones(0), jnp.ones(3), jnp.array([0, 1, 2]), jnp.array([0]), shape=(0, 4),
                            backend=backend)
        np.testing.assert_array_equal(got, np.zeros(3))  # no row owns the entries

    def test_unvalidated_bad_structure_gives_zero_for_entries_outside_rows_and_columns(self, backend):
        indices = np.array([0, 9, 1, -1, 2, 3], np.int32)
        indptr = np.array([1, 3, 5], np.int32)  # entry 0 and entry 5 belong to no row
        y, w = np.array([1., 2., 3., 4.], np.float32), np.arange(1., 7., dtype=np.float32)
        f = lambda t: ej.csrmv_dt2t(y if t else y[:2], w, indices, indptr, shape=(2, 4), transpose=t,
                                    backend=backend, validate=False)
        np.testing.assert_array_equal(f(False), [0, 0, 3, 0, 10, 0])  # columns 9 and -1 are outside [0, 4)
        np.testing.assert_array_equal(f(True), [0, 0, 6, 0, 15, 0])

    @pytest.mark.parametrize('transpose', [False, True])
    def test_gradients_in_w_and_y_are_the_dense_ones_in_both_modes(self, backend, transpose):
        indices, indptr = structure(11)
        y, w = values(12, N if transpose else M, np.float32), values(13, NNZ, np.float32)
        ct = values(14, NNZ, np.float32)
        f = lambda y, w: ej.csrmv_dt2t(y, w, indices, indptr, shape=(M, N), transpose=transpose, backend=backend)
        gy, gw = jax.jit(jax.grad(lambda y, w: jnp.sum(f(y, w) * ct), argnums=(0, 1)))(y, w)
        pos = indices if transpose else entry_rows(indptr, NNZ)
        np.testing.assert_allclose(gw, ct * y[pos], rtol=1e-6)
        np.testing.assert_allclose(gy, np.bincount(pos, ct * w, minlength=y.shape[0]), rtol=1e-5, atol=1e-6)
        dy, dw = values(15, y.shape, np.float32), values(16, NNZ, np.float32)
        _, tangent = jax.jvp(f, (y, w), (dy, dw))
        np.testing.assert_allclose(tangent, want(dy, w, indices, indptr, transpose)
                                   + want(y, dw, indices, indptr, transpose), rtol=1e-6)

    def test_vmap_over_y_w_or_both_is_one_call_per_element(self, backend):
        indices, indptr = structure(17)
        ys, ws = values(18, (2, BATCH, M), np.float32), values(19, (2, BATCH, NNZ), np.float32)
        mm = lambda y, w: ej.csrmm_dt2t(y, w, indices, indptr, shape=(M, N), backend=backend)
        loop = np.stack([want(ys[i], ws[i], indices, indptr, False) for i in range(2)])
        np.testing.assert_allclose(jax.vmap(mm)(ys, ws), loop, rtol=1e-6)
        np.testing.assert_allclose(jax.vmap(mm, (1, 1), 1)(ys.swapaxes(0, 1), ws.swapaxes(0, 1)),
                                   loop.swapaxes(0, 1), rtol=1e-6)
        mv = lambda y, w: ej.csrmv_dt2t(y, w, indices, indptr, shape=(M, N), backend=backend)
        np.testing.assert_allclose(jax.vmap(mv, (0, None))(ys[0], ws[0, 0]),
                                   want(ys[0], np.broadcast_to(ws[0, 0], (BATCH, NNZ)), indices, indptr, False),
                                   rtol=1e-6)
        np.testing.assert_allclose(jax.vmap(mv, (None, 0))(ys[0, 0], ws[0]),
                                   want(np.broadcast_to(ys[0, 0], (BATCH, M)), ws[0], indices, indptr, False),
                                   rtol=1e-6)

    def test_vmap_over_structure_runs_per_element(self, backend):
        idx = np.stack([structure(s)[0] for s in (20, 21)])
        indptr = structure(20)[1]
        y, w = values(22, N, np.float32), values(23, NNZ, np.float32)
        got = jax.vmap(lambda i: ej.csrmv_dt2t(y, w, i, indptr, shape=(M, N), transpose=True, backend=backend,
                                               validate=False))(idx)
        np.testing.assert_allclose(got, [want(y, w, i, indptr, True) for i in idx], rtol=1e-6)


class TestOtherLayouts:
    def test_csc_reads_the_row_at_each_entry_and_fcn_is_csr_with_fixed_rows(self):
        dense = values(30, (M, N), np.float32) * (np.random.default_rng(31).random((M, N)) < 0.5)
        C = ej.CSC.fromdense(dense)
        y_rows, y_cols = values(32, M, np.float32), values(33, N, np.float32)
        cols = entry_rows(np.asarray(C.indptr), C.indices.shape[0])
        np.testing.assert_allclose(ej.cscmv_dt2t(y_rows, C.data, C.indices, C.indptr, shape=(M, N)),
                                   C.data * y_rows[C.indices])
        np.testing.assert_allclose(ej.cscmv_dt2t(y_cols, C.data, C.indices, C.indptr, shape=(M, N), transpose=True),
                                   C.data * y_cols[cols])
        np.testing.assert_allclose(ej.cscmm_dt2t(y_rows[None], C.data, C.indices, C.indptr, shape=(M, N)),
                                   (C.data * y_rows[C.indices])[None])
        np.testing.assert_allclose(C.dt2t(y_rows), C.data * y_rows[C.indices])
        idx = np.random.default_rng(34).integers(0, N, (M, 3)).astype(np.int32)
        wf = values(35, (M, 3), np.float32)
        np.testing.assert_allclose(ej.fcnmv_dt2t(wf, idx, y_rows, shape=(M, N)), wf * y_rows[:, None])
        np.testing.assert_allclose(ej.fcnmv_dt2t(wf, idx, y_cols, shape=(M, N), transpose=True), wf * y_cols[idx])
        yb = values(36, (2, N), np.float32)
        np.testing.assert_allclose(ej.fcnmm_dt2t(wf, idx, yb, shape=(M, N), transpose=True), wf * yb[:, idx])
        F = ej.FixedNumConn((wf, idx), shape=(M, N))
        np.testing.assert_allclose(F.dt2t_transposed(y_cols), wf * y_cols[idx])
        np.testing.assert_allclose(F.T.dt2t(y_cols), wf * y_cols[idx])

    def test_jit_dt2t_values_are_the_generated_matrix_entries_times_y(self):
        A = ej.JITCMatrix((0.5, 1.5), prob=0.3, seed=7, shape=(M, N), law='uniform')
        S = A.tocsr()
        y = values(37, N, np.float32)
        got = legacy.jitumv_dt2t(0.5, 1.5, 0.3, y, 7, shape=(M, N), transpose=True)
        np.testing.assert_allclose(got, S.data * y[S.indices], rtol=1e-6)
        yr = values(38, M, np.float32)
        rows = entry_rows(np.asarray(S.indptr), S.indices.shape[0])
        np.testing.assert_allclose(legacy.jitnmv_dt2t(1.0, 0.5, 0.3, yr, 7, shape=(M, N)),
                                   ej.JITCMatrix((1.0, 0.5), prob=0.3, seed=7, shape=(M, N), law='normal').tocsr().data
                                   * yr[rows], rtol=1e-5)
        np.testing.assert_allclose(legacy.jitsmv_dt2t(2.0, 0.3, yr, 7, shape=(M, N)), 2.0 * yr[rows])
        g = jax.grad(lambda w: legacy.jitsmv_dt2t(w, 0.3, yr, 7, shape=(M, N)).sum())(2.0)
        np.testing.assert_allclose(g, yr[rows].sum(), rtol=1e-6)

    def test_jit_dt2t_runs_inside_jit_with_traced_weights_and_rejects_a_traced_seed(self):
        yr = values(39, M, np.float32)
        eager = legacy.jitnmv_dt2t(1.0, 0.5, 0.3, yr, 7, shape=(M, N))
        jitted = jax.jit(lambda p, y: legacy.jitnmv_dt2t(p[0], p[1], 0.3, y, 7, shape=(M, N)))(jnp.array([1.0, 0.5]),
                                                                                                yr)
        np.testing.assert_allclose(jitted, eager, rtol=1e-6)
        with pytest.raises(ValueError, match='the seed is traced'):
            jax.jit(lambda s: legacy.jitsmv_dt2t(1.0, 0.3, yr, s, shape=(M, N)))(7)


class TestBadInput:
    def test_errors_name_the_argument_and_the_fix(self):
        indices, indptr = structure(40)
        with pytest.raises(ValueError, match=r'csrmv_dt2t\(\): y must have length 7'):
            ej.csrmv_dt2t(jnp.ones(M + 1), jnp.ones(NNZ), indices, indptr, shape=(M, N))
        with pytest.raises(ValueError, match=r'csrmv_dt2t\(\): w must have shape \(24,\)'):
            ej.csrmv_dt2t(jnp.ones(M), jnp.ones(NNZ - 1), indices, indptr, shape=(M, N))
        with pytest.raises(TypeError, match=r'w must be a float16, float32 or float64 array, got int32'):
            ej.csrmv_dt2t(jnp.ones(M), jnp.ones(NNZ, jnp.int32), indices, indptr, shape=(M, N))
        bad = indices.copy()
        bad[0] = N
        with pytest.raises(ValueError, match=r'indices\[0\] = 6 is outside \[0, 6\)'):
            ej.csrmv_dt2t(jnp.ones(M), jnp.ones(NNZ), bad, indptr, shape=(M, N))
        with pytest.raises(ValueError, match=r'fcnmv_dt2t\(\): indices must have shape \(7, k\)'):
            ej.fcnmv_dt2t(1.0, np.zeros((M + 1, 2), np.int32), jnp.ones(M), shape=(M, N))

    def test_fcn_weights_of_another_shape_name_the_shape_of_indices(self):
        indices = np.zeros((M, 2), np.int32)
        with pytest.raises(ValueError, match=r'fcnmv_dt2t\(\): weights must have the shape of indices, \(7, 2\)'):
            ej.fcnmv_dt2t(jnp.ones((2, M)), indices, jnp.ones(M), shape=(M, N))
        with pytest.raises(ValueError, match=r'fcnmm_dt2t\(\): weights must have the shape of indices'):
            ej.fcnmm_dt2t(jnp.ones((3, 2, M)), indices, jnp.ones((3, M)), shape=(M, N))
        np.testing.assert_allclose(ej.fcnmv_dt2t(jnp.ones(2 * M), indices, jnp.ones(M), shape=(M, N)),
                                   np.ones((M, 2)))


class TestUnits:
    def test_units_multiply_through_every_form_and_the_numbers_are_the_unitless_ones(self):
        u = pytest.importorskip('brainunit', reason=UNITS_EXTRA)
        indices, indptr = structure(41)
        y, w = values(42, M, np.float32), values(43, NNZ, np.float32)
        got = ej.csrmv_dt2t(y * u.mV, w * u.nS, indices, indptr, shape=(M, N))
        assert got.unit == u.pA
        np.testing.assert_allclose(got.mantissa, want(y, w, indices, indptr, False), rtol=1e-6)
        idx = np.zeros((M, 2), np.int32)
        got = ej.fcnmv_dt2t(np.ones((M, 2), np.float32) * u.nS, idx, y * u.mV, shape=(M, N))
        np.testing.assert_allclose(got.to_decimal(u.pA), np.repeat(y[:, None], 2, 1), rtol=1e-6)
        assert legacy.jitsmv_dt2t(0.5 * u.nS, 0.5, y * u.mV, 1, shape=(M, N)).unit == u.pA
        a, b = values(44, (M, 2), np.float32), values(45, (2, N), np.float32)
        got = ej.csr_sddmm(a * u.mV, b * u.nS, indices, indptr, shape=(M, N))
        np.testing.assert_allclose(got.to_decimal(u.pA), (a @ b)[entry_rows(indptr, NNZ), indices], rtol=1e-5)
        g = jax.grad(lambda w: ej.csrmv_dt2t(y * u.mV, w, indices, indptr, shape=(M, N)).mantissa.sum())(w)
        np.testing.assert_allclose(g, y[entry_rows(indptr, NNZ)], rtol=1e-6)
