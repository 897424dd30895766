"""brainunit Quantities through every operator: the result carries the product of units, on every backend.

Every operator is called with a Quantity weight, a Quantity operand, or
both, eager, under jit, vmap and grad, and must give the unit-less call's
numbers in the product of the units. The unit-less call itself is checked
against NumPy by each family's own tests. Units are split off before the
primitive (``eventjax.kernels.common.units``), so the operator test runs on
the ``jax`` backend in the default run and on every cpu backend in
``make test-long``.
"""

import subprocess
import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
from tests.extras import UNITS_EXTRA

u = pytest.importorskip('brainunit', reason=UNITS_EXTRA)

M, N, K, B = 3, 4, 2, 2
RNG = np.random.default_rng(7)
DENSE_W = RNG.normal(size=(M, N)).astype(np.float32)
CSR_W = ej.CSR.fromdense(np.where(RNG.random((M, N)) < 0.6, DENSE_W, 0).astype(np.float32))
FCN_W = RNG.normal(size=(M, K)).astype(np.float32)
FCN_IDX = np.array([[0, 3], [1, 1], [2, 0]], np.int32)
JITC = dict(seed=3, prob=0.5, shape=(M, N), law='uniform')
WEIGHT_UNIT, X_UNIT = u.nS, u.mV


def _x(matrix, events):
    x = RNG.random((N, B) if matrix else (N,)).astype(np.float32)
    return np.where(x < 0.5, 0., 1.).astype(np.float32) if events else x


# name -> (weights, call(weights, x, backend)); transpose=False, so x has N rows.
OPERATORS = {
    'binary_densemv': (DENSE_W, lambda w, x, b: ej.binary_densemv(w, x, backend=b)),
    'binary_densemm': (DENSE_W, lambda w, x, b: ej.binary_densemm(w, x, backend=b)),
    'csrmv': (CSR_W.data, lambda w, x, b: ej.csrmv(w, CSR_W.indices, CSR_W.indptr, x, shape=(M, N), backend=b)),
    'csrmm': (CSR_W.data, lambda w, x, b: ej.csrmm(w, CSR_W.indices, CSR_W.indptr, x, shape=(M, N), backend=b)),
    'binary_csrmv': (CSR_W.data, lambda w, x, b: ej.binary_csrmv(w, CSR_W.indices, CSR_W.indptr, x, shape=(M, N),
                                                                  backend=b)),
    'binary_csrmm': (CSR_W.data, lambda w, x, b: ej.binary_csrmm(w, CSR_W.indices, CSR_W.indptr, x, shape=(M, N),
                                                                  backend=b)),
    'fcnmv': (FCN_W, lambda w, x, b: ej.fcnmv(w, FCN_IDX, x, shape=(M, N), backend=b)),
    'fcnmm': (FCN_W, lambda w, x, b: ej.fcnmm(w, FCN_IDX, x, shape=(M, N), backend=b)),
    'binary_fcnmv': (FCN_W, lambda w, x, b: ej.binary_fcnmv(w, FCN_IDX, x, shape=(M, N), backend=b)),
    'binary_fcnmm': (FCN_W, lambda w, x, b: ej.binary_fcnmm(w, FCN_IDX, x, shape=(M, N), backend=b)),
    # A uniform law's (low, high) pair: both carry the weight unit.
    'jitcmv': ((np.float32(0.5), np.float32(1.5)), lambda w, x, b: ej.jitcmv(w, x, **JITC, backend=b)),
    'jitcmm': ((np.float32(0.5), np.float32(1.5)), lambda w, x, b: ej.jitcmm(w, x, **JITC, backend=b)),
    'binary_jitcmv': ((np.float32(0.5), np.float32(1.5)), lambda w, x, b: ej.binary_jitcmv(w, x, **JITC, backend=b)),
    'binary_jitcmm': ((np.float32(0.5), np.float32(1.5)), lambda w, x, b: ej.binary_jitcmm(w, x, **JITC, backend=b)),
}
PLACEMENTS = {'weights': (WEIGHT_UNIT, None), 'operand': (None, X_UNIT), 'both': (WEIGHT_UNIT, X_UNIT)}
MODES = ('eager', 'jit', 'vmap', 'grad')


def _cpu_backends(name):
    return ej.get_registry()[name].available_backends('cpu')


def _cases():
    # Every placement on the jax backend; every other cpu backend with both in units, in make test-long
    # only: units are split off before the primitive, so a backend's kernels never see one.
    for name in OPERATORS:
        for backend in _cpu_backends(name):
            for placement in (PLACEMENTS if backend == 'jax' else ('both',)):
                yield pytest.param(name, backend, placement, id=f'{name}-{backend}-{placement}',
                                   marks=() if backend == 'jax' else pytest.mark.long)


def _with(value, unit):
    if unit is None:
        return jnp.asarray(value) if not isinstance(value, tuple) else value
    return tuple(jnp.asarray(v) * unit for v in value) if isinstance(value, tuple) else jnp.asarray(value) * unit


def _check(got, want, unit):
    if unit is None:
        assert not isinstance(got, u.Quantity)
        np.testing.assert_allclose(np.asarray(got), np.asarray(want), rtol=1e-5, atol=1e-5)
        return
    assert isinstance(got, u.Quantity), f'expected a Quantity in {unit}, got {type(got).__name__}'
    assert u.get_unit(got) == unit, f'unit {u.get_unit(got)} != {unit}'
    np.testing.assert_allclose(np.asarray(got.mantissa), np.asarray(want), rtol=1e-5, atol=1e-5)


def _product_unit(unit_w, unit_x):
    if unit_w is None or unit_x is None:
        return unit_x if unit_w is None else unit_w
    return unit_w * unit_x


@pytest.mark.parametrize('name, backend, placement', list(_cases()))
def test_an_operator_keeps_the_product_of_units_eager_jit_vmap_and_grad(name, backend, placement):
    weights, call = OPERATORS[name]
    unit_w, unit_x = PLACEMENTS[placement]
    out_unit = _product_unit(unit_w, unit_x)
    x = _x(name.endswith('mm'), name.startswith('binary'))
    w_q, x_q = _with(weights, unit_w), _with(x, unit_x)
    plain = lambda w, x: call(w, x, backend)  # noqa: E731

    want = plain(_with(weights, None), jnp.asarray(x))
    _check(plain(w_q, x_q), want, out_unit)  # eager
    _check(jax.jit(plain)(w_q, x_q), want, out_unit)

    xs = np.stack([x, x[::-1]])
    want_batch = jax.vmap(plain, in_axes=(None, 0))(_with(weights, None), jnp.asarray(xs))
    _check(jax.vmap(plain, in_axes=(None, 0))(w_q, _with(xs, unit_x)), want_batch, out_unit)

    # The derivative w.r.t. the (first) weight is in out_unit / weight unit.
    first = w_q[0] if isinstance(w_q, tuple) else w_q

    def total(w0, mantissa=False):
        w = (w0, w_q[1]) if isinstance(w_q, tuple) else w0
        out = plain(w, x_q)
        return out.mantissa.sum() if mantissa and isinstance(out, u.Quantity) else out.sum()

    def total_plain(w0):
        w = (w0, weights[1]) if isinstance(weights, tuple) else w0
        return plain(w, jnp.asarray(x)).sum()

    want_grad = jax.grad(total_plain)(jnp.asarray(weights[0] if isinstance(weights, tuple) else weights))
    grad_unit = None if out_unit is None else out_unit / (unit_w or u.Unit())
    got = u.autograd.grad(total)(first)
    if grad_unit is not None and u.get_unit(got).is_unitless:
        grad_unit = None
    _check(got, want_grad, grad_unit)
    if unit_w is not None:
        # jax.grad w.r.t. a Quantity weight is a Quantity (in the weight's unit, as for any pytree).
        g = jax.grad(lambda w0: total(w0, mantissa=True))(first)
        assert isinstance(g, u.Quantity) and u.get_unit(g) == unit_w
        np.testing.assert_allclose(np.asarray(g.mantissa), np.asarray(want_grad), rtol=1e-5, atol=1e-5)


class TestContainers:
    def test_a_csr_with_quantity_data_multiplies_events_and_quantity_vectors(self):
        A = CSR_W.with_data(CSR_W.data * WEIGHT_UNIT)
        dense = np.asarray(CSR_W.todense())
        spikes = jnp.array([True, False, True])
        _check(ej.EventArray(spikes) @ A, np.asarray(spikes, np.float32) @ dense, WEIGHT_UNIT)
        v = jnp.arange(N, dtype=jnp.float32)
        _check(A @ (v * X_UNIT), dense @ np.asarray(v), WEIGHT_UNIT * X_UNIT)
        s = np.asarray(spikes, np.float32)
        _check(A.T @ (jnp.asarray(s) * X_UNIT), dense.T @ s, WEIGHT_UNIT * X_UNIT)
        _check(A.todense(), dense, WEIGHT_UNIT)
        _check(A.tocoo().data, np.asarray(CSR_W.data), WEIGHT_UNIT)

    def test_csc_and_fixed_num_conn_keep_the_unit_through_conversions(self):
        C = ej.CSC.fromdense(np.asarray(CSR_W.todense()))
        C = C.with_data(C.data * WEIGHT_UNIT)
        _check(C.todense(), np.asarray(CSR_W.todense()), WEIGHT_UNIT)
        F = ej.FixedNumPerPre((FCN_W * WEIGHT_UNIT, FCN_IDX), shape=(M, N))
        dense = np.asarray(ej.FixedNumConn((FCN_W, FCN_IDX), shape=(M, N)).todense())
        _check(F.todense(), dense, WEIGHT_UNIT)
        _check(F.tocsr().todense(), dense, WEIGHT_UNIT)
        _check(ej.FixedNumConn.from_csr(F.tocsr()).todense(), dense, WEIGHT_UNIT)
        _check(ej.EventArray(jnp.ones(M, bool)) @ F, dense.sum(0), WEIGHT_UNIT)
        P = ej.FixedNumPerPost((FCN_W * WEIGHT_UNIT, FCN_IDX), shape=(N, M))
        _check(ej.EventArray(jnp.ones(N, bool)) @ P, dense.T.sum(0), WEIGHT_UNIT)

    def test_scalar_arithmetic_and_with_data_keep_units(self):
        A = CSR_W.with_data(CSR_W.data * WEIGHT_UNIT)
        _check((A * 2.0).data, np.asarray(CSR_W.data) * 2, WEIGHT_UNIT)
        _check((-A).data, -np.asarray(CSR_W.data), WEIGHT_UNIT)
        _check((A / 2.0).data, np.asarray(CSR_W.data) / 2, WEIGHT_UNIT)
        _check((CSR_W * (2.0 * X_UNIT)).data, np.asarray(CSR_W.data) * 2, X_UNIT)

    def test_a_jitc_matrix_carries_its_weight_unit_and_rejects_a_mixed_pair(self):
        A = ej.JITCMatrix((0.5 * WEIGHT_UNIT, 1.5 * WEIGHT_UNIT), prob=0.5, seed=3, shape=(M, N), law='uniform')
        plain = ej.JITCMatrix((0.5, 1.5), prob=0.5, seed=3, shape=(M, N), law='uniform')
        _check(A.todense(), np.asarray(plain.todense()), WEIGHT_UNIT)
        _check(A @ (jnp.ones(N) * X_UNIT), np.asarray(plain @ jnp.ones(N)), WEIGHT_UNIT * X_UNIT)
        _check(jax.jit(lambda a: a.T @ jnp.ones(M))(A), np.asarray(plain.T @ jnp.ones(M)), WEIGHT_UNIT)
        _check(A.tocsr().todense(), np.asarray(plain.todense()), WEIGHT_UNIT)
        with pytest.raises(u.UnitMismatchError):
            ej.JITCMatrix((0.5 * WEIGHT_UNIT, 1.5 * X_UNIT), prob=0.5, seed=3, shape=(M, N), law='uniform')

    def test_a_dimensionless_product_is_a_plain_array(self):
        out = CSR_W.with_data(CSR_W.data * X_UNIT) @ (jnp.ones(N) / X_UNIT)
        assert not isinstance(out, u.Quantity)
        np.testing.assert_allclose(np.asarray(out), np.asarray(CSR_W.todense()).sum(1), rtol=1e-6)

    def test_unit_errors_downstream_are_brainunits_own(self):
        current = ej.EventArray(jnp.ones(M, bool)) @ (jnp.asarray(DENSE_W) * WEIGHT_UNIT)
        with pytest.raises(u.UnitMismatchError):
            current + 1.0 * X_UNIT  # noqa: B018


def test_importing_eventjax_and_calling_it_imports_no_units_package():
    code = ('import sys, jax.numpy as jnp, eventjax as ej\n'
            'ej.binary_densemv(jnp.ones((2, 2)), jnp.array([True, False]), backend="jax")\n'
            'loaded = sorted(m for m in sys.modules if m.split(".")[0] in ("brainunit", "saiunit"))\n'
            'assert not loaded, loaded\n')
    run = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]


class TestGradedEventsAndDelivery:
    """Graded events and delayed delivery take Quantities as the other products do: units in, units out."""

    X = np.array([0., 2., -1.], np.float32)  # a zero: skipped, never multiplied

    def test_graded_events_in_units_through_every_container_keep_the_product_of_units(self):
        xq = ej.GradedEvents(jnp.asarray(self.X) * X_UNIT)
        dense = np.asarray(CSR_W.todense())
        A = CSR_W.with_data(CSR_W.data * WEIGHT_UNIT)
        _check(xq @ A, self.X @ dense, WEIGHT_UNIT * X_UNIT)
        _check(jax.jit(lambda x, a: x @ a)(xq, A), self.X @ dense, WEIGHT_UNIT * X_UNIT)
        _check(A.T @ xq, dense.T @ self.X, WEIGHT_UNIT * X_UNIT)
        _check(ej.GradedEvents(jnp.asarray(self.X)) @ A, self.X @ dense, WEIGHT_UNIT)  # the weights' unit only
        _check(xq @ CSR_W, self.X @ dense, X_UNIT)  # the events' unit only
        x4 = ej.GradedEvents(jnp.arange(N, dtype=jnp.float32) * X_UNIT)
        _check(A @ x4, dense @ np.arange(N), WEIGHT_UNIT * X_UNIT)  # the gather direction
        _check(xq @ (jnp.asarray(DENSE_W) * WEIGHT_UNIT), self.X @ DENSE_W, WEIGHT_UNIT * X_UNIT)
        _check(jnp.asarray(DENSE_W) @ x4, DENSE_W @ np.arange(N), X_UNIT)
        F = ej.FixedNumConn((FCN_W * WEIGHT_UNIT, FCN_IDX), shape=(M, N))
        fdense = np.asarray(ej.FixedNumConn((FCN_W, FCN_IDX), shape=(M, N)).todense())
        _check(xq @ F, self.X @ fdense, WEIGHT_UNIT * X_UNIT)
        J = ej.JITCMatrix((0.5 * WEIGHT_UNIT, 1.5 * WEIGHT_UNIT), prob=0.5, seed=3, shape=(M, N), law='uniform')
        plain = ej.JITCMatrix((0.5, 1.5), prob=0.5, seed=3, shape=(M, N), law='uniform')
        _check(xq @ J, np.asarray(jnp.asarray(self.X) @ plain), WEIGHT_UNIT * X_UNIT)

    def test_graded_events_in_units_differentiate_like_the_unitless_product(self):
        A = CSR_W.with_data(CSR_W.data * WEIGHT_UNIT)
        f = lambda x: (ej.GradedEvents(x * X_UNIT) @ A).mantissa.sum()  # noqa: E731
        g = jax.grad(f)(jnp.asarray(self.X))
        np.testing.assert_allclose(g, np.asarray(CSR_W.todense()).sum(1), rtol=1e-6)  # zeros included: exact

    # The conversion happens before the primitive, as for the operators: the other backends in make test-long.
    @pytest.mark.parametrize('backend', ['jax', pytest.param('numba', marks=pytest.mark.long),
                                         pytest.param('warp', marks=pytest.mark.long)])
    def test_delivery_converts_into_the_rings_unit_on_every_backend(self, backend):
        if backend not in ej.get_registry()['csr_delay_deliver'].available_backends('cpu'):
            pytest.skip(f'{backend} is not installed here')
        data, indices, indptr = CSR_W.data, CSR_W.indices, CSR_W.indptr
        delays = jnp.ones(indices.shape, jnp.int32) * 2
        ring = jnp.zeros((3, N), jnp.float32)
        call = lambda r, x, d, weighted=None: ej.csr_delay_deliver(  # noqa: E731
            r, x, d, indices, indptr, delays, 0, shape=(M, N), weighted=weighted, backend=backend)
        want = np.asarray(call(ring, ej.GradedEvents(jnp.asarray(self.X)), data))
        # nS x mV is pA: into a ring in nA the numbers shrink 1000-fold, and the ring keeps nA.
        got = jax.jit(call)(ring * u.nA, ej.GradedEvents(jnp.asarray(self.X) * u.mV), data * u.nS)
        _check(got, want / 1000, u.nA)
        got = call(ring * u.pA, ej.GradedEvents(jnp.asarray(self.X) * u.mV), data * u.nS)
        _check(got, want, u.pA)
        # Binary events deliver the weight itself, whatever unit the events carry.
        spikes = jnp.asarray(self.X) > 0
        _check(call(ring * u.nS, spikes, data * u.nS), np.asarray(call(ring, spikes, data)), u.nS)

    def test_a_delivery_in_another_dimension_than_the_ring_is_brainunits_error(self):
        ring = jnp.zeros((3, N), jnp.float32)
        args = (CSR_W.indices, CSR_W.indptr, 1, 0)
        with pytest.raises(u.UnitMismatchError):
            ej.csr_delay_deliver(ring * u.mV, jnp.ones(M, bool), CSR_W.data * u.nS, *args, shape=(M, N))
        with pytest.raises(u.UnitMismatchError):
            ej.csr_delay_deliver(ring, jnp.ones(M, bool), CSR_W.data * u.nS, *args, shape=(M, N))
        with pytest.raises(u.UnitMismatchError):
            ej.csr_delay_deliver(ring * u.nS, ej.GradedEvents(jnp.ones(M) * u.mV), CSR_W.data * u.nS, *args,
                                 shape=(M, N))

    def test_fcn_delivery_and_a_delayed_container_keep_the_weights_unit(self):
        ring = jnp.zeros((3, N), jnp.float32)
        spikes = jnp.array([True, False, True])
        want = ej.fcn_delay_deliver(ring, spikes, FCN_W, FCN_IDX, 1, 0, shape=(M, N))
        _check(ej.fcn_delay_deliver(ring * u.nS, spikes, FCN_W * u.nS, FCN_IDX, 1, 0, shape=(M, N)), want, u.nS)
        W = CSR_W.with_data(CSR_W.data * WEIGHT_UNIT).with_delays(np.full(CSR_W.indices.shape, 2))
        r0 = W.init_ring()
        assert isinstance(r0, u.Quantity) and u.get_unit(r0) == WEIGHT_UNIT and r0.shape == (3, N)
        got = jax.jit(lambda r: W.deliver(r, spikes, 0))(r0)
        plain = CSR_W.with_delays(np.full(CSR_W.indices.shape, 2))
        _check(got, plain.deliver(plain.init_ring(), spikes, 0), WEIGHT_UNIT)
        _check(W.read(got, 2), np.asarray(spikes, np.float32) @ np.asarray(CSR_W.todense()), WEIGHT_UNIT)
