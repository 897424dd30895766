"""eventjax.compat.brainevent: brainevent's names and signatures on eventjax, and the opt-in that installs it."""

import ast
import importlib.util
import pathlib
import sys
import types
import warnings

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
import eventjax.compat.brainevent as be
from eventjax import errors


@pytest.fixture(autouse=True)
def _jax_kernels():
    # Names and signatures are what is tested here; the jax kernels avoid numba compiles.
    with ej.config.override(cpu='jax'):
        yield


DENSE = np.array([[0., 2., 0.], [3., 0., 4.]], np.float32)


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


class TestInstall:
    def test_install_refuses_when_a_real_brainevent_is_installed_unless_told(self, monkeypatch):
        monkeypatch.delitem(sys.modules, 'brainevent', raising=False)
        monkeypatch.setattr(importlib.util, 'find_spec',
                            lambda name, *a: types.SimpleNamespace(origin='/site-packages/brainevent/__init__.py'))
        with pytest.raises(RuntimeError, match='replace_installed=True'):
            be.install()
        assert 'brainevent' not in sys.modules

    def test_install_refuses_when_brainevent_is_already_imported(self, monkeypatch):
        real = types.ModuleType('brainevent')
        monkeypatch.setitem(sys.modules, 'brainevent', real)
        with pytest.raises(RuntimeError, match='already imported'):
            be.install(replace_installed=True)
        assert sys.modules['brainevent'] is real

    def test_install_makes_import_brainevent_resolve_here_and_uninstall_undoes_it(self, monkeypatch):
        monkeypatch.delitem(sys.modules, 'brainevent', raising=False)
        monkeypatch.delitem(sys.modules, 'brainevent.config', raising=False)
        try:
            assert be.install(replace_installed=True) is be
            assert be.install(replace_installed=True) is be  # again: a no-op
            import brainevent
            from brainevent import config
            assert brainevent is be and config is be.config
        finally:
            be.uninstall()
        assert 'brainevent' not in sys.modules and 'brainevent.config' not in sys.modules


def _brainevent_public_names():
    spec = importlib.util.find_spec('brainevent')
    if spec is None:
        pytest.skip('brainevent is not installed (the test extra installs it with brainstate)')
    tree = ast.parse(pathlib.Path(spec.origin).read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(getattr(t, 'id', None) == '__all__' for t in node.targets):
            return ast.literal_eval(node.value)
    raise AssertionError(f'no __all__ in {spec.origin}')


def test_every_public_brainevent_name_exists_or_names_the_eventjax_alternative():
    names = _brainevent_public_names()
    assert len(names) > 100
    missing = []
    for name in names:
        try:
            getattr(be, name)
        except AttributeError as e:
            if 'eventjax' not in str(e) or 'has no attribute' in str(e):
                missing.append((name, str(e)))
    assert not missing, missing


class TestContainers:
    def test_csr_and_csc_take_brainevents_arguments(self):
        A = ej.CSR.fromdense(DENSE)
        parts = (A.data, A.indices, A.indptr)
        for B in (be.CSR(parts, shape=(2, 3)), be.CSR(*parts, shape=(2, 3))):
            _close(B.todense(), DENSE)
            _close(be.EventArray(jnp.array([True, True])) @ B, DENSE.sum(0))
            _close(jax.jit(lambda b: b.with_data(b.data * 2) @ jnp.ones(3))(B), DENSE.sum(1) * 2)
        C = ej.CSC.fromdense(DENSE)
        _close(be.CSC((C.data, C.indices, C.indptr), shape=(2, 3)).todense(), DENSE)

    def test_a_container_backend_is_refused_with_the_eventjax_way_to_choose_it(self):
        A = ej.CSR.fromdense(DENSE)
        with pytest.raises(ValueError, match=r"set_backend\('cpu', 'numba'\)"):
            be.CSR((A.data, A.indices, A.indptr), shape=(2, 3), backend='numba')

    def test_fixed_num_conn_forms_take_a_tuple_and_keep_their_class_through_jit(self):
        W, idx = jnp.array([[1., 2.], [3., 4.]]), jnp.array([[0, 2], [1, 2]])
        A = be.FixedPostNumConn((W, idx), shape=(2, 3))
        _close(A.todense(), [[1., 0., 2.], [0., 3., 4.]])
        out = jax.jit(lambda a, s: be.EventArray(s) @ a.with_data(a.data * 2))(A, jnp.array([True, False]))
        _close(out, [2., 0., 4.])
        P = be.FixedPreNumConn((W, idx), shape=(3, 2))
        _close(P.todense(), np.array([[1., 0., 2.], [0., 3., 4.]]).T)
        assert type(jax.tree_util.tree_map(lambda x: x, P)) is be.FixedPreNumConn


class TestJITC:
    def test_the_jitc_operators_map_brainevents_positional_order(self):
        v = jnp.arange(3, dtype=jnp.float32)
        A = ej.JITCMatrix(0.5, prob=0.4, seed=5, shape=(2, 3))
        _close(be.jitsmv(0.5, 0.4, v, 5, shape=(2, 3)), A @ v)
        _close(be.binary_jitsmv(0.5, 0.4, v > 0, seed=5, shape=(2, 3)), A @ (v > 0).astype(jnp.float32))
        U = ej.JITCMatrix((0.1, 0.3), prob=0.4, seed=5, shape=(2, 3), law='uniform')
        _close(be.jitumv(0.1, 0.3, 0.4, v, 5, shape=(2, 3)), U @ v)
        _close(be.jitu(0.1, 0.3, 0.4, 5, shape=(2, 3)), U.todense())
        _close(be.jits(0.5, 0.4, 5, shape=(2, 3), transpose=True), A.todense().T)
        with pytest.raises(TypeError, match=r'\(w1, w2, prob, x\[, seed\]\)'):
            be.jitnmv(0.1, 0.4, v, shape=(2, 3))

    def test_the_jitc_classes_build_a_jitc_matrix_of_the_asked_shape(self):
        R = be.JITCScalarR((0.5, 0.4, 5), shape=(2, 3))
        C = be.JITCNormalC(0.0, 1.0, 0.4, 5, shape=(2, 3))
        assert R.shape == (2, 3) and C.shape == (2, 3) and C.law == 'normal'
        _close(R.todense(), ej.JITCMatrix(0.5, prob=0.4, seed=5, shape=(2, 3)).todense())


def test_config_maps_the_settings_eventjax_has_and_names_the_rest():
    be.config.set_backend('cpu', 'jax_raw')
    assert be.config.get_backend('cpu') == 'jax'
    be.config.clear_backends()
    with pytest.raises(AttributeError, match='eventjax.config'):
        be.config.no_such_setting  # noqa: B018


def test_the_lfsr_choice_is_recorded_and_changes_no_generated_connection():
    v = jnp.arange(30, dtype=jnp.float32)
    before = be.jitsmv(0.5, 0.3, v, 7, shape=(20, 30))
    try:
        be.config.set_lfsr_algorithm('lfsr113')
        assert be.config.get_lfsr_algorithm() == 'lfsr113'
        _close(be.jitsmv(0.5, 0.3, v, 7, shape=(20, 30)), before)
        with pytest.raises(ValueError, match='lfsr88'):
            be.config.set_lfsr_algorithm('mt19937')
    finally:
        be.config.set_lfsr_algorithm('lfsr88')


class TestFixedProbPreLayout:
    """brainstate's EventFixedProb with efferent_target='pre' builds the indices of a post-per-pre layout.

    brainstate hands indices shaped (out_size, k) with values in [0, in_size)
    to FixedPreNumConn / CSC with shape=(out_size, in_size); with
    afferent_ratio < 1 brainevent corrupts the heap on it. The same
    construction here is a ValueError naming the mismatch, and the layout the
    containers document gives the dense answer.
    """

    IN, OUT, K = 20, 40, 3

    def _pre_layout(self, ratio):
        rng = np.random.RandomState(1)
        n_pre, n_post = self.OUT, self.IN  # brainstate's naming on the 'pre' path
        indices = rng.randint(0, n_post, size=(n_pre, self.K)).astype(np.int32)
        if ratio == 1.:
            return lambda: be.FixedPreNumConn((jnp.ones((n_pre, self.K)), indices), shape=(n_pre, n_post))
        selected = rng.random(n_pre) < ratio
        flat = indices[selected].flatten()
        indptr = np.insert(np.arange(1, n_pre + 1) * self.K - np.cumsum(~selected) * self.K, 0, 0).astype(np.int32)
        return lambda: be.CSC((jnp.ones(flat.size), flat, indptr), shape=(n_pre, n_post))

    def test_brainstates_pre_layout_with_afferent_ratio_below_one_is_a_clear_error(self):
        with pytest.raises(ValueError, match=r'indptr must have length 21 \(columns \+ 1\)'):
            self._pre_layout(0.5)()

    def test_brainstates_pre_layout_with_every_neuron_is_a_clear_error(self):
        with pytest.raises(ValueError, match=r'indices must have shape \(20, k\)'):
            self._pre_layout(1.)()

    def test_the_documented_layout_gives_the_dense_answer(self):
        rng = np.random.RandomState(2)
        indices = rng.randint(0, self.IN, size=(self.OUT, self.K)).astype(np.int32)
        w = rng.rand(self.OUT, self.K).astype(np.float32)
        A = be.FixedPreNumConn((w, indices), shape=(self.IN, self.OUT))
        dense = np.zeros((self.IN, self.OUT), np.float32)
        np.add.at(dense, (indices, np.arange(self.OUT)[:, None]), w)
        spikes = rng.rand(self.IN) < 0.3
        _close(be.EventArray(jnp.asarray(spikes)) @ A, spikes.astype(np.float32) @ dense)


class TestExceptionsABrainEventUserCatches:
    def test_a_wrong_number_of_jvp_rules_is_a_value_error(self):
        p = ej.XLACustomKernel('be_jvp_count_example')
        p.def_jax_kernel(lambda outs: lambda x, y: (x + y,))
        ej.defjvp(p, lambda dx, x, y, **kw: dx)  # one rule for two operands
        f = lambda x: p(x, x, outs=jax.ShapeDtypeStruct((2,), jnp.float32))[0].sum()  # noqa: E731
        with pytest.raises(ValueError, match='1 JVP rules for 2 operands'):
            jax.grad(f)(jnp.ones(2))
        assert issubclass(errors.JVPRuleCountError, TypeError)

    def test_an_unsupported_dtype_is_a_value_error(self):
        assert issubclass(errors.UnsupportedDtypeError, ValueError)
        assert issubclass(errors.UnsupportedDtypeError, TypeError)

    def test_a_reused_primitive_name_warns_already_registered(self):
        ej.XLACustomKernel('be_reused_name_example')
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter('always')
            ej.XLACustomKernel('be_reused_name_example')
        assert any('already registered' in str(w.message) for w in caught)
