"""The Semantics page holds on every backend: bad structure, non-finite weights, index dtypes, promotion.

Each test runs the same call on jax, numba, warp and cpp (the cpu backends here; the
dense family has no cpp kernels),
eagerly and under ``jit``, and compares with a plain NumPy statement of the
contract (``reference_semantics``).
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from eventjax.kernels.csr.csrmv import _csrmv
from tests.kernels.conftest import backends_of
from tests.kernels.reference_semantics import csr_product, fcn_product

BACKENDS = backends_of(_csrmv.primitive)
DENSE_BACKENDS = tuple(b for b in BACKENDS if b in backends_of(ej.get_registry()['binary_densemv']))
CSR_OPS = {'csrmv': (ej.csrmv, False, False), 'csrmm': (ej.csrmm, False, True),
           'binary_csrmv': (ej.binary_csrmv, True, False), 'binary_csrmm': (ej.binary_csrmm, True, True)}
FCN_OPS = {'fcnmv': (ej.fcnmv, False, False), 'fcnmm': (ej.fcnmm, False, True),
           'binary_fcnmv': (ej.binary_fcnmv, True, False), 'binary_fcnmm': (ej.binary_fcnmm, True, True)}

# (2, 3) CSR: a column past n, a negative column, an indptr that decreases
# and runs past len(indices); after repair row 0 owns [0, 3), row 1 [3, 5).
BAD_CSR = (np.array([0, 7, -1, 2, 1], np.int32), np.array([0, 3, 9], np.int32))
# (3, 3) FCN with k = 2: one index past n, one negative.
BAD_FCN = np.array([[0, 3], [-1, 2], [1, 1]], np.int32)


def operand(rows, binary, matrix, seed=0):
    rng = np.random.default_rng(seed)
    shape = (rows, 2) if matrix else (rows,)
    return (rng.random(shape) < 0.6) if binary else rng.normal(size=shape).astype(np.float32)


def close(got, want):
    got, want = np.asarray(got, np.float64), np.asarray(want, np.float64)
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(np.nan_to_num(got), np.nan_to_num(want), rtol=1e-5, atol=1e-5)


class TestConcreteBadStructureRaisesBeforeAnyKernel:
    @pytest.mark.parametrize('backend', BACKENDS)
    @pytest.mark.parametrize('indices, indptr, message', [
        ([0, 7, 1], [0, 2, 3], r'csrmv\(\): indices\[1\] = 7 is outside \[0, 3\)'),
        ([0, -1, 1], [0, 2, 3], r'indices\[1\] = -1 is outside'),
        ([0, 1, 1], [0, 3, 1], r'indptr must never decrease, but indptr\[2\] = 1 < indptr\[1\] = 3'),
        ([0, 1, 1], [1, 2, 3], r'indptr\[0\] must be 0, got 1'),
        ([0, 1, 1], [0, 2, 9], r'indptr\[-1\] = 9 is past the end of indices \(length 3\)'),
    ])
    def test_csr(self, backend, indices, indptr, message):
        with pytest.raises(ValueError, match=message):
            ej.csrmv(jnp.ones(3), jnp.array(indices), np.array(indptr), jnp.ones(3), shape=(2, 3), backend=backend)

    @pytest.mark.parametrize('name', sorted(CSR_OPS) + sorted(FCN_OPS))
    def test_every_sparse_operator_checks_and_names_itself(self, name):
        fn, binary, matrix = {**CSR_OPS, **FCN_OPS}[name]
        structure = BAD_CSR if name in CSR_OPS else (BAD_FCN,)
        weights = jnp.ones(5) if name in CSR_OPS else jnp.ones((3, 2))
        with pytest.raises(ValueError, match=rf'{name}\(\): (indices|indptr)\['):
            fn(weights, *structure, operand(3, binary, matrix), shape=(BAD_FCN.shape[0] if name in FCN_OPS else 2, 3))

    def test_entries_past_the_last_row_are_not_checked(self):
        # indices[2] belongs to no row (indptr[-1] = 2), so it is not part of the matrix.
        got = ej.csrmv(jnp.ones(3), jnp.array([0, 1, 99]), jnp.array([0, 1, 2]), jnp.ones(2), shape=(2, 2))
        np.testing.assert_array_equal(got, [1.0, 1.0])


@pytest.mark.parametrize('transpose', [False, True])
class TestTracedBadStructureIsDroppedAlike:
    @pytest.mark.parametrize('name', sorted(CSR_OPS))
    def test_csr_forward_and_weight_gradient(self, name, transpose):
        fn, binary, matrix = CSR_OPS[name]
        shape, (indices, indptr) = (2, 3), BAD_CSR
        x = operand(shape[0] if transpose else shape[1], binary, matrix)
        data = np.arange(1, 6, dtype=np.float32)
        want = csr_product(data, indices, indptr, x, shape, transpose, binary)
        # d sum(y) / d data[k] = the product with data = one-hot(k).
        want_grad = [csr_product(np.eye(5)[k], indices, indptr, x, shape, transpose, binary).sum() for k in range(5)]
        for backend in BACKENDS:
            f = lambda d, i, p, x, b=backend: fn(d, i, p, x, shape=shape, transpose=transpose, backend=b)
            close(jax.jit(f)(data, indices, indptr, x), want)
            unchecked = fn(data, indices, indptr, x, shape=shape, transpose=transpose, backend=backend,
                           validate=False)
            close(unchecked, want)
            close(jax.jit(jax.grad(lambda *a, f=f: f(*a).sum()))(data, indices, indptr, x), np.array(want_grad))
            if not matrix:  # vmap folds a vector operator into its mm kernel
                batched = jax.jit(jax.vmap(f, (None, None, None, 0)))(data, indices, indptr, np.stack([x, x]))
                close(batched, np.stack([want] * 2))

    @pytest.mark.parametrize('name', sorted(FCN_OPS))
    def test_fcn_forward_and_weight_gradient(self, name, transpose):
        fn, binary, matrix = FCN_OPS[name]
        shape = (3, 3)
        x = operand(3, binary, matrix)
        weights = np.arange(1, 7, dtype=np.float32).reshape(3, 2)
        want = fcn_product(weights, BAD_FCN, x, shape, transpose, binary)
        onehot = np.eye(6).reshape(6, 3, 2)
        want_grad = np.array([fcn_product(e, BAD_FCN, x, shape, transpose, binary).sum() for e in onehot])
        for backend in BACKENDS:
            f = lambda w, i, x, b=backend: fn(w, i, x, shape=shape, transpose=transpose, backend=b)
            close(jax.jit(f)(weights, BAD_FCN, x), want)
            close(fn(weights, BAD_FCN, x, shape=shape, transpose=transpose, backend=backend, validate=False), want)
            close(jax.jit(jax.grad(lambda *a, f=f: f(*a).sum()))(weights, BAD_FCN, x), want_grad.reshape(3, 2))


NAN_W = np.array([[np.nan, 1.0, np.inf], [2.0, -np.inf, 3.0]], np.float32)


@pytest.mark.parametrize('transpose', [False, True])
class TestWeightsWithoutEventsContributeNothing:
    @pytest.mark.parametrize('matrix', [False, True])
    def test_dense(self, transpose, matrix):
        # Only the last column (last row when transposed) fires; every non-finite weight is elsewhere.
        w = NAN_W if not transpose else np.vstack([NAN_W[0], [3.0, 4.0, 5.0]]).astype(np.float32)
        fire = np.array([False, False, True]) if not transpose else np.array([False, True])
        s = np.stack([fire, np.zeros_like(fire)], axis=1) if matrix else fire
        selected = w[:, 2] if not transpose else w[1]
        want = np.stack([selected, np.zeros_like(selected)], axis=1) if matrix else selected
        fn = ej.binary_densemm if matrix else ej.binary_densemv
        for backend in DENSE_BACKENDS:
            close(fn(w, s, transpose=transpose, backend=backend), want)
            close(jax.jit(lambda w, s, b=backend: fn(w, s, transpose=transpose, backend=b))(w, s), want)

    def test_dense_nan_is_kept_where_an_event_selects_it(self, transpose):
        w = np.array([[np.nan, 1.0], [np.inf, 2.0]], np.float32)
        s = np.array([True, False])
        want = [np.nan, np.inf] if not transpose else [np.nan, 1.0]
        for backend in DENSE_BACKENDS:
            close(ej.binary_densemv(w, s, transpose=transpose, backend=backend), np.array(want))

    @pytest.mark.parametrize('matrix', [False, True])
    def test_csr_and_fcn(self, transpose, matrix):
        data = np.array([np.nan, np.inf, -np.inf, 1.0, 2.0], np.float32)
        indices, indptr = np.array([0, 1, 2, 0, 1], np.int32), np.array([0, 3, 5], np.int32)
        # Without transpose the events are columns; with it, rows.
        x = np.array([False, False, True]) if not transpose else np.array([False, True])
        x = np.stack([x, ~x], axis=1) if matrix else x
        want = csr_product(data, indices, indptr, x, (2, 3), transpose, True)
        fcn_w, fcn_i = data[:4].reshape(2, 2), indices[:4].reshape(2, 2)
        fcn_want = fcn_product(fcn_w, fcn_i, x, (2, 3), transpose, True)
        csr_fn = ej.binary_csrmm if matrix else ej.binary_csrmv
        fcn_fn = ej.binary_fcnmm if matrix else ej.binary_fcnmv
        for backend in BACKENDS:
            for jit in (False, True):
                wrap = jax.jit if jit else (lambda f: f)
                got = wrap(lambda d, i, p, x, b=backend: csr_fn(d, i, p, x, shape=(2, 3), transpose=transpose,
                                                                 backend=b))(data, indices, indptr, x)
                close(got, want)
                got = wrap(lambda w, i, x, b=backend: fcn_fn(w, i, x, shape=(2, 3), transpose=transpose,
                                                              backend=b))(fcn_w, fcn_i, x)
                close(got, fcn_want)

    def test_float_products_are_ieee_over_stored_entries(self, transpose):
        # NaN * 0 is NaN: a zero in x does not skip a stored NaN weight.
        data = np.array([np.nan, 1.0], np.float32)
        indices, indptr = np.array([0, 1], np.int32), np.array([0, 1, 2], np.int32)
        v = np.zeros(2, np.float32)
        want = csr_product(data, indices, indptr, v, (2, 2), transpose, False)
        fcn_want = fcn_product(data.reshape(2, 1), indices.reshape(2, 1), v, (2, 2), transpose, False)
        assert np.isnan(want).any()
        for backend in BACKENDS:
            close(ej.csrmv(data, indices, indptr, v, shape=(2, 2), transpose=transpose, backend=backend), want)
            close(ej.fcnmv(data.reshape(2, 1), indices.reshape(2, 1), v, shape=(2, 2), transpose=transpose,
                           backend=backend), fcn_want)


class TestIndexDtypesAndShapes:
    @pytest.mark.parametrize('which', ['indices', 'indptr'])
    def test_int64_csr_values_that_do_not_fit_int32_are_refused(self, which):
        indices, indptr = np.array([0, 1, 1], np.int64), np.array([0, 2, 3], np.int64)
        (indices if which == 'indices' else indptr)[1] = 2**32 + 1
        with pytest.raises(ValueError, match=rf'csrmv\(\): {which}\[1\] = 4294967297 does not fit int32.*'
                                             r"jax_enable_x64"):
            ej.csrmv(jnp.ones(3), indices, indptr, jnp.ones(2), shape=(2, 2))

    def test_int64_fcn_values_that_do_not_fit_int32_are_refused(self):
        indices = np.array([[0, 2**32 + 3]], np.int64)
        with pytest.raises(ValueError, match=r'binary_fcnmv\(\): indices\[0, 1\] = 4294967299 does not fit'):
            ej.binary_fcnmv(1.0, indices, jnp.ones(4, bool), shape=(1, 4))

    def test_int64_values_that_fit_are_accepted(self):
        got = ej.csrmv(jnp.ones(3), np.array([0, 1, 1], np.int64), np.array([0, 2, 3], np.int64),
                       jnp.array([1.0, 10.0]), shape=(2, 2))
        np.testing.assert_array_equal(got, [11.0, 10.0])

    @pytest.mark.parametrize('axis', [0, 1])
    def test_a_dimension_past_int32_is_refused_before_any_kernel(self, axis):
        shape = (2, 2**31) if axis else (2**31, 2)
        with pytest.raises(ValueError, match=rf'csrmv\(\): shape\[{axis}\] = 2147483648 .* does not fit the int32 '
                                             r'indices.*int64 indices'):
            ej.csrmv(jnp.ones(1), jnp.zeros(1, jnp.int32), jnp.zeros(3, jnp.int32), jnp.ones(2), shape=shape)
        with pytest.raises(ValueError, match=rf'fcnmv\(\): shape\[{axis}\] = 2147483648'):
            ej.fcnmv(1.0, jnp.zeros((2, 1), jnp.int32), jnp.ones(2), shape=shape)


class TestResultDtype:
    @pytest.mark.parametrize('backend', BACKENDS)
    def test_float16_weights_times_a_float32_vector_give_float32(self, backend):
        data = jnp.ones(3, jnp.float16)
        indices, indptr, v = jnp.array([0, 1, 1]), jnp.array([0, 2, 3]), jnp.array([70000.0, 1.0])
        with jax.numpy_dtype_promotion('standard'):
            y = ej.csrmv(data, indices, indptr, v, shape=(2, 2), backend=backend)
            f = ej.fcnmv(jnp.ones((2, 1), jnp.float16), jnp.array([[0], [1]]), v, shape=(2, 2), backend=backend)
            grads = jax.grad(lambda d, v: ej.csrmv(d, indices, indptr, v, shape=(2, 2), backend=backend).sum(),
                             (0, 1))(data, v)
        assert y.dtype == jnp.float32 and f.dtype == jnp.float32
        np.testing.assert_allclose(y, [70001.0, 1.0])
        np.testing.assert_allclose(f, [70000.0, 1.0])
        assert grads[0].dtype == jnp.float16 and grads[1].dtype == jnp.float32

    def test_a_mixed_pair_under_strict_promotion_raises_jaxs_error(self):
        with pytest.raises(jax.dtypes.TypePromotionError):
            ej.csrmv(jnp.ones(1, jnp.float16), jnp.array([0]), jnp.array([0, 1]), jnp.ones(1), shape=(1, 1))

    @pytest.mark.parametrize('backend', BACKENDS)
    def test_binary_products_keep_the_weights_dtype(self, backend):
        y = ej.binary_csrmv(jnp.ones(3, jnp.float16), jnp.array([0, 1, 1]), jnp.array([0, 2, 3]),
                            jnp.array([1.0, 2.0]), shape=(2, 2), backend=backend)
        assert y.dtype == jnp.float16
        np.testing.assert_array_equal(y, [2.0, 1.0])
