"""eventjax.compat.brainevent follows brainevent 0.3: its event rule, array API, keywords, errors and primitives."""

import sys

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
import eventjax.compat.brainevent as be
from eventjax import errors


@pytest.fixture(autouse=True)
def _jax_kernels():
    # Names, rules and signatures are what is tested here; the jax kernels avoid numba compiles.
    with ej.config.override(cpu='jax'):
        yield


W = np.arange(8, dtype=np.float32).reshape(4, 2)
MIXED = jnp.array([2., -1., 0., 1.])  # three events by brainevent's rule, two by eventjax's


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


class TestTheEventRuleIsBrainevents:
    def test_a_binary_array_counts_every_nonzero_entry_as_an_event(self):
        _close(be.BinaryArray(MIXED) @ jnp.asarray(W), W[[0, 1, 3]].sum(0))
        _close(ej.EventArray(MIXED) @ jnp.asarray(W), W[[0, 3]].sum(0))

    def test_containers_apply_the_rule_of_the_binary_array_they_get(self):
        A = be.CSR.fromdense(W)
        _close(be.BinaryArray(MIXED) @ A, W[[0, 1, 3]].sum(0))
        F = be.FixedNumPerPre((jnp.ones((4, 1)), jnp.zeros((4, 1), jnp.int32)), shape=(4, 2))
        _close(be.BinaryArray(MIXED) @ F, [3., 0.])
        J = be.JITCScalarR((1.0, 1.0, 3), shape=(4, 2))
        _close(be.BinaryArray(MIXED) @ J, np.ones(4)[[0, 1, 3]].sum() * np.ones(2))

    def test_the_operators_apply_it_too_and_nan_is_an_event(self):
        A = ej.CSR.fromdense(W)
        v = jnp.array([jnp.nan, -3., 0., 1.])
        _close(be.binary_csrmv(A.data, A.indices, A.indptr, v, shape=(4, 2), transpose=True), W[[0, 1, 3]].sum(0))
        _close(be.binary_densemv(jnp.asarray(W), v, transpose=True), W[[0, 1, 3]].sum(0))

    def test_gradients_pass_through_the_rule_as_through_a_product(self):
        g = jax.grad(lambda s: (be.BinaryArray(s) @ jnp.asarray(W)).sum())(MIXED)
        _close(g, W.sum(1))


class TestTheBinaryArrayApi:
    def test_size_len_iteration_indexing_and_with_value(self):
        b = be.BinaryArray(jnp.array([[1., 0.], [0., 3.], [1., 1.]]))
        assert (b.size, len(b), b.shape) == (6, 3, (3, 2))
        _close([r.sum() for r in b], [1., 3., 2.])
        _close(b[1], [0., 3.]) and _close(b[:, 0], [1., 0., 1.])
        c = b.with_value(jnp.zeros((3, 2)))
        assert type(c) is be.BinaryArray and float(c.value.sum()) == 0.
        assert isinstance(b, be.EventRepresentation) and isinstance(b, ej.EventArray)

    def test_numpy_sees_the_values(self):
        out = np.asarray(be.BinaryArray(jnp.array([True, False])))
        assert out.dtype == np.bool_ and out.tolist() == [True, False]

    def test_it_survives_jit_and_keeps_its_class(self):
        out = jax.jit(lambda b: b)(be.BinaryArray(MIXED))
        assert type(out) is be.BinaryArray


class TestBrainevent030Keywords:
    def test_workspace_is_accepted_and_weighted_multiplies_by_the_values(self):
        A = ej.CSR.fromdense(W)
        args = (A.data, A.indices, A.indptr, MIXED)
        _close(be.binary_csrmv(*args, shape=(4, 2), workspace=None, transpose=True), W[[0, 1, 3]].sum(0))
        _close(be.binary_csrmv(*args, shape=(4, 2), transpose=True, weighted=True), np.asarray(MIXED) @ W)
        B = jnp.stack([MIXED, MIXED], 1)
        _close(be.binary_csrmm(A.data, A.indices, A.indptr, B, shape=(4, 2), workspace=None, transpose=True,
                               weighted=True), W.T @ np.asarray(B))

    def test_dense_and_fixed_connection_products_take_weighted(self):
        _close(be.binary_densemv(jnp.asarray(W), MIXED, transpose=True, weighted=True), np.asarray(MIXED) @ W)
        idx = jnp.array([[0], [1], [0], [1]])
        w = jnp.ones((4, 1))
        _close(be.binary_fcnmv(w, idx, MIXED, shape=(4, 2), transpose=True, weighted=True), [2., 0.])
        _close(be.binary_fcnmv(w, idx, MIXED, shape=(4, 2), transpose=True), [1., 2.])

    def test_the_indexed_products_permute_the_weights_in_both_modes(self):
        A = ej.CSR.fromdense(W)
        perm = jnp.arange(A.data.shape[0])[::-1]
        want = be.binary_csrmv(A.data[perm], A.indices, A.indptr, MIXED, shape=(4, 2), transpose=True)
        _close(be.binary_csrmv_indexed(A.data, A.indices, A.indptr, perm, MIXED, shape=(4, 2), transpose=True), want)
        want = be.binary_csrmv(A.data[perm], A.indices, A.indptr, MIXED, shape=(4, 2), transpose=True, weighted=True)
        _close(be.binary_csrmv_indexed(A.data, A.indices, A.indptr, perm, MIXED, shape=(4, 2), transpose=True,
                                       weighted=True), want)

    def test_csr_to_csc_index_can_leave_out_the_permutation(self):
        assert len(be.csr_to_csc_index(np.array([0, 2, 3]), np.array([0, 1, 0]), shape=(2, 2),
                                       include_perm=False)) == 2


class TestErrorsAreBraineventsAndEventjaxs:
    def test_a_missing_backend_is_caught_by_either_class(self):
        A = ej.CSR.fromdense(W)
        for cls in (be.KernelNotAvailableError, errors.BackendNotFoundError, be.KernelError, be.BrainEventError):
            with pytest.raises(cls):
                be.binary_csrmv(A.data, A.indices, A.indptr, MIXED, shape=(4, 2), transpose=True,
                                backend='no_such_backend')

    def test_a_0d_or_3d_operand_is_a_math_error_and_a_value_error(self):
        A = ej.CSR.fromdense(W)
        for bad in (jnp.array(1.), jnp.ones((4, 2, 2))):
            with pytest.raises(be.MathError, match='1-D'):
                be.binary_csrmv(A.data, A.indices, A.indptr, bad, shape=(4, 2))
        assert issubclass(be.MathError, ValueError)

    def test_every_class_is_a_brainevent_error_under_brainevents_name(self):
        for name in ('MathError', 'KernelCompilationError', 'CompilationError', 'NvccNotFoundError',
                     'UnsupportedOperationError', 'KernelToolchainError'):
            cls = getattr(be, name)
            assert issubclass(cls, be.BrainEventError) and cls.__name__ == name
            assert cls.__module__ == 'eventjax.compat.brainevent'  # where pickle finds it, brainevent installed or not
        assert issubclass(be.CompilationError, errors.KernelCompilationError)

    def test_the_compilation_errors_keep_brainevents_fields(self):
        e = be.CompilationError('failed', compiler_output='out', command='nvcc x.cu', stage='link')
        assert (e.compiler_output, e.command, e.stage) == ('out', 'nvcc x.cu', 'link')
        assert 'nvcc x.cu' in str(e) and 'out' in str(e)
        assert be.UnsupportedArchError('sm_120').compiler_output == ''


class TestPrimitivesAndNames:
    def test_primitive_objects_are_eventjaxs_and_report_their_backends(self):
        assert be.binary_jitumv_p is ej.get_registry()['binary_jitcmv'] is be.binary_jitsmv_p
        assert 'jax' in be.jitn_p.available_backends('cpu')
        assert 'jax' in be.update_dense_on_binary_pre_p.available_backends('cpu')

    def test_a_name_not_served_keeps_its_hint_through_from_import(self, monkeypatch):
        monkeypatch.delitem(sys.modules, 'brainevent', raising=False)
        monkeypatch.delitem(sys.modules, 'brainevent.config', raising=False)
        try:
            be.install(replace_installed=True)
            with pytest.raises(ImportError, match='no tuning step'):
                from brainevent import HybridConfig  # noqa: F401
            import brainevent
            assert not hasattr(brainevent, 'PallasLFSR88RNG')
            with pytest.raises(AttributeError, match='counter-based generator'):
                brainevent.PallasLFSR88RNG  # noqa: B018
        finally:
            be.uninstall()

    def test_the_plasticity_names_are_eventjaxs_operators(self):
        Wd = jnp.zeros((2, 3))
        out = be.update_dense_on_binary_pre(Wd, jnp.array([True, False]), jnp.array([.1, .2, .3]))
        _close(out, [[.1, .2, .3], [0., 0., 0.]])
        C = ej.CSC.fromdense(np.ones((2, 3), np.float32))
        out = be.update_csc_on_binary_pre(jnp.zeros(6), C.indices, C.indptr, jnp.array([0., 2.]),
                                          jnp.array([.1, .2, .3]), shape=(2, 3))
        got = ej.CSC((out, C.indices, C.indptr), shape=(2, 3)).todense()
        _close(got, [[0., 0., 0.], [.1, .2, .3]])
        out = be.update_csc_on_binary_post(jnp.zeros(6), C.indices, C.indptr, jnp.array([.5, .7]),
                                           jnp.array([1., 0., 0.]), w_max=0.6, shape=(2, 3))
        _close(ej.CSC((out, C.indices, C.indptr), shape=(2, 3)).todense(), [[.5, 0., 0.], [.6, 0., 0.]])


class TestContainers030:
    def test_dense_tcsr_and_the_jitc_classes(self):
        D = be.Dense(jnp.asarray(W))
        _close(be.BinaryArray(MIXED) @ D, W[[0, 1, 3]].sum(0))
        _close(D @ be.BinaryArray(jnp.array([1., 0.])), W[:, 0])
        assert be.CSR.fromdense(W).nse == 7
        T = be.TCSR(be.CSR.fromdense(W))
        assert isinstance(T, be.CSR) and isinstance(T, be.DataRepresentation)
        _close(T.todense(), W)
        R, C = be.JITCScalarR((0.5, 0.4, 5), shape=(3, 4)), be.JITCScalarC((0.5, 0.4, 5), shape=(3, 4))
        assert isinstance(R, be.JITCScalarR) and isinstance(C, ej.JITCMatrix) and C.shape == (3, 4)
        _close(C.todense(), ej.JITCMatrix(0.5, prob=0.4, seed=5, shape=(4, 3)).todense().T)


def test_numba_kernel_runs_a_numba_kernel_as_a_jax_function():
    numba = pytest.importorskip('numba')

    @numba.njit
    def add(x, y, out):
        for i in range(out.size):
            out[i] = x[i] + y[i]

    f = be.numba_kernel(add, outs=jax.ShapeDtypeStruct((3,), jnp.float32))
    _close(jax.jit(f)(jnp.ones(3), jnp.arange(3.)), [1., 2., 3.])


UNIT_PAIRS = pytest.mark.parametrize('mat_unit, trace_unit', [('mV', 'mV'), ('mV', 'ms'), ('ms', 'mV'), ('ms', 'ms')])


class TestBrainevent030sOwnPlasticityTests:
    """brainevent 0.3.0's ``_dense/plasticity_binary_test.py`` and ``_csr/plasticity_binary_test.py`` cases, on
    the public names (brainstate's random numbers become NumPy's, the shapes smaller, the oracles' bool spikes
    cast for strict dtype promotion)."""

    @pytest.fixture
    def u(self):
        # Only the tests that take it need brainunit (the units extra).
        return pytest.importorskip('brainunit')

    rng = np.random.default_rng(0)

    def _random(self, *shape):
        return jnp.asarray(self.rng.random(shape), jnp.float32)

    @staticmethod
    def _runs_or_mismatches(u, mat_unit, trace_unit, update, check):
        # brainevent's pattern: the same dimension runs, another is brainunit's UnitMismatchError
        # (here raised by the update itself, not by the oracle after it).
        if getattr(u, mat_unit).has_same_dim(getattr(u, trace_unit)):
            check(update())
        else:
            with pytest.raises(u.UnitMismatchError):
                update()

    def _unit_inputs(self, u, mat_unit, trace_unit, mask_zeros: bool):
        mat = self._random(20, 30)
        mask = (mat < 0.5) & (mat != 0.) if mask_zeros else mat < 0.5
        return (mask, jnp.where(mask, mat, 0.) * getattr(u, mat_unit), self._random(20) < 0.3,
                self._random(30) * getattr(u, trace_unit))

    @UNIT_PAIRS
    def test_dense_on_pre_with_unit(self, u, mat_unit, trace_unit):
        _, mat, pre_spike, post_trace = self._unit_inputs(u, mat_unit, trace_unit, mask_zeros=False)

        def check(mat2):
            assert u.math.allclose(mat2, mat + u.math.outer(pre_spike.astype(jnp.float32), post_trace))

        self._runs_or_mismatches(u, mat_unit, trace_unit,
                                 lambda: be.update_dense_on_binary_pre(mat, pre_spike, post_trace), check)

    @pytest.mark.parametrize('w_min', [None, 0.1])
    @pytest.mark.parametrize('w_max', [None, 0.5])
    def test_dense_on_pre_min_max(self, w_min, w_max):
        mat, pre_spike, post_trace = self._random(20, 30), self._random(20) < 0.3, self._random(30)
        mat2 = be.update_dense_on_binary_pre(mat, pre_spike, post_trace, w_min=w_min, w_max=w_max)
        mat = mat + jnp.outer(pre_spike.astype(jnp.float32), post_trace)
        if w_min is not None:
            mat = jnp.maximum(mat, w_min)
        if w_max is not None:
            mat = jnp.minimum(mat, w_max)
        assert jnp.allclose(mat2, mat)

    @UNIT_PAIRS
    def test_csr_on_pre_with_unit(self, u, mat_unit, trace_unit):
        mask, mat, pre_spike, post_trace = self._unit_inputs(u, mat_unit, trace_unit, mask_zeros=True)
        csr = be.CSR.fromdense(mat)

        def check(data):
            dense = u.math.where(mask, mat + u.math.outer(pre_spike.astype(jnp.float32), post_trace), 0. * mat.unit)
            assert u.math.allclose(csr.with_data(data).todense(), dense)

        self._runs_or_mismatches(u, mat_unit, trace_unit, lambda: be.update_csr_on_binary_pre(
            csr.data, csr.indices, csr.indptr, pre_spike, post_trace, shape=csr.shape), check)


def test_brainevent_030s_binary_array_error_conditions():
    # brainevent 0.3.0's _event/binary_test.py::test_error_conditions.
    binary_mat = be.BinaryArray(np.array([[0, 1, 1], [1, 0, 1]], dtype=np.uint8))
    with pytest.raises(AssertionError):
        _ = binary_mat @ np.array([[1.0, 2.0], [3.0, 4.0]], np.float32)
    with pytest.raises(be.MathError):
        _ = be.BinaryArray(np.array(1, dtype=np.uint8)) @ np.ones((2, 2), np.float32)
    with pytest.raises(be.MathError):
        _ = be.BinaryArray(np.zeros((2, 2, 2), dtype=np.uint8)) @ np.ones((2, 2), np.float32)
