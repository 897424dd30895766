"""eventjax.compat.brainevent keeps brainevent's numbers: its event rule at every entry point, its units, its bounds.

brainevent counts an entry as an event when it is ``!= 0`` (negative and NaN
too), where eventjax counts ``> 0``; its plasticity updates clip every weight
after the update, where eventjax bounds only the entries an event touched.
The oracles here are NumPy statements of brainevent 0.3.0's rules;
``make test-compat`` compares with brainevent itself (stack_tests/test_rules.py).
"""

import pickle
import types

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej
import eventjax.compat.brainevent as be
from eventjax import errors


@pytest.fixture(autouse=True)
def _jax_kernels():
    # The rules are what is tested here; the jax kernels avoid numba compiles.
    with ej.config.override(cpu='jax'):
        yield


SPIKES = np.array([2., -1., 0., np.nan], np.float32)  # events by brainevent's rule: 0, 1, 3
FIRED = SPIKES != 0
W = np.arange(8, dtype=np.float32).reshape(4, 2) - 2.  # stored entries: every non-zero


def _close(a, b):
    np.testing.assert_allclose(np.asarray(a), np.asarray(b), rtol=1e-5, atol=1e-6)


class TestEveryEntryPointCountsNonzeroAsAnEvent:
    def test_compact_and_compact_bitpack_give_the_product_of_the_binary_array(self):
        B = be.BinaryArray(jnp.asarray(SPIKES))
        A = be.CSR.fromdense(W)
        want = W[FIRED].sum(0)
        for form in (B, B.compact(), B.compact(capacity=4), B.compact_bitpack()):
            _close(form @ A, want)
            _close(form @ jnp.asarray(W), want)
        assert B.bitpack().words.tolist() == [0b1011]

    def test_compact_binary_from_array_applies_the_rule(self):
        C = be.CompactBinary.from_array(jnp.asarray(SPIKES))
        assert C.todense().tolist() == FIRED.tolist() and int(C.count) == 3
        assert isinstance(C, ej.CompactEvents)

    def test_delivery_with_delays_counts_negative_and_nan_spikes(self):
        A = ej.CSR.fromdense(W)
        delays = jnp.ones(A.indices.shape, jnp.int32)
        ring = jnp.zeros((2, 2), jnp.float32)
        for events in (jnp.asarray(SPIKES), be.BinaryArray(jnp.asarray(SPIKES))):
            out = be.csr_delay_deliver(ring, events, A.data, A.indices, A.indptr, delays, 0, shape=(4, 2))
            _close(out[1], W[FIRED].sum(0))
        # eventjax's own delivery reads a compat BinaryArray by the array's rule too.
        out = ej.csr_delay_deliver(ring, be.BinaryArray(jnp.asarray(SPIKES)), A.data, A.indices, A.indptr, delays,
                                   0, shape=(4, 2))
        _close(out[1], W[FIRED].sum(0))

    def test_weighted_delivery_multiplies_by_the_values(self):
        A = ej.CSR.fromdense(W)
        x = jnp.array([2., -1., 0., 1.])
        out = be.csr_delay_deliver(jnp.zeros((2, 2)), x, A.data, A.indices, A.indptr, jnp.ones(A.indices.shape,
                                   jnp.int32), 0, shape=(4, 2), weighted=True)
        _close(out[1], np.asarray(x) @ W)


# -- the plasticity updates ----------------------------------------------------------------------------

PRE_TRACE, POST_TRACE = np.array([.1, .2, .3, .4], np.float32), np.array([.5, .25], np.float32)
START = np.array([[2., -1.], [.4, 1.5], [.3, .6], [.7, -.2]], np.float32)  # some outside [0, 1]


def _brainevent_dense(weight, on_rows: bool, trace):
    """brainevent's rule: add the trace where the event is != 0, then clip every weight to [0, 1]."""
    new = weight.copy()
    if on_rows:
        new[FIRED] += trace
    else:
        new[:, FIRED[:2]] += trace[:, None]
    return np.clip(new, 0., 1.)


class TestThePlasticityUpdatesFollowBrainevent:
    def test_dense_updates_count_nonzero_events_and_clip_every_weight(self):
        out = be.update_dense_on_binary_pre(jnp.asarray(START), jnp.asarray(SPIKES), jnp.asarray(POST_TRACE), 0., 1.)
        _close(out, _brainevent_dense(START, True, POST_TRACE))
        out = be.update_dense_on_binary_post(jnp.asarray(START), jnp.asarray(PRE_TRACE), jnp.asarray(SPIKES[:2]),
                                             0., 1.)
        _close(out, _brainevent_dense(START, False, PRE_TRACE))

    def test_csr_updates_count_nonzero_events_and_clip_every_stored_weight(self):
        A = ej.CSR.fromdense(np.ones((4, 2), np.float32))
        data = jnp.asarray(START.reshape(-1))
        out = be.update_csr_on_binary_pre(data, A.indices, A.indptr, jnp.asarray(SPIKES), jnp.asarray(POST_TRACE),
                                          0., 1., shape=(4, 2))
        _close(out, _brainevent_dense(START, True, POST_TRACE).reshape(-1))
        rows, ptr, pos = ej.csr_column_view(A.indices, A.indptr, shape=(4, 2))
        out = be.update_csr_on_binary_post(data, rows, ptr, pos, jnp.asarray(PRE_TRACE), jnp.asarray(SPIKES[:2]),
                                           0., 1., shape=(4, 2))
        _close(out, _brainevent_dense(START, False, PRE_TRACE).reshape(-1))

    def test_containers_update_by_the_same_rules(self):
        A = be.CSR.fromdense(np.ones((4, 2), np.float32)).with_data(jnp.asarray(START.reshape(-1)))
        _close(A.update_on_pre(jnp.asarray(SPIKES), jnp.asarray(POST_TRACE), 0., 1.).todense(),
               _brainevent_dense(START, True, POST_TRACE))
        _close(A.update_on_post(jnp.asarray(PRE_TRACE), jnp.asarray(SPIKES[:2]), 0., 1.).todense(),
               _brainevent_dense(START, False, PRE_TRACE))
        F = be.FixedNumPerPre((jnp.asarray(START), jnp.tile(jnp.arange(2), (4, 1))), shape=(4, 2))
        _close(F.update_on_pre(jnp.asarray(SPIKES), jnp.asarray(POST_TRACE), 0., 1.).todense(),
               _brainevent_dense(START, True, POST_TRACE))
        _close(F.update_on_post(jnp.asarray(PRE_TRACE), jnp.asarray(SPIKES[:2]), 0., 1.).todense(),
               _brainevent_dense(START, False, PRE_TRACE))

    def test_fixed_connection_and_csc_updates_count_nonzero_events(self):
        idx = jnp.tile(jnp.arange(2), (4, 1))
        out = be.update_fixed_post_conn_on_binary_pre(jnp.asarray(START), idx, jnp.asarray(SPIKES),
                                                      jnp.asarray(POST_TRACE), 0., 1., shape=(4, 2))
        _close(out, _brainevent_dense(START, True, POST_TRACE))
        # (n_post, k) = (4, 2) rows of post neurons, each from pre neurons 0 and 1.
        out = be.update_fixed_pre_conn_on_binary_post(jnp.asarray(START), idx, jnp.asarray(POST_TRACE),
                                                      jnp.asarray(SPIKES), 0., 1., shape=(2, 4))
        _close(out, _brainevent_dense(START, True, POST_TRACE))
        C = ej.CSC.fromdense(np.ones((4, 2), np.float32))
        out = be.update_csc_on_binary_pre(jnp.asarray(START.T.reshape(-1)), C.indices, C.indptr, jnp.asarray(SPIKES),
                                          jnp.asarray(POST_TRACE), 0., 1., shape=(4, 2))
        _close(out, _brainevent_dense(START, True, POST_TRACE).T.reshape(-1))

    def test_without_bounds_nothing_is_clipped(self):
        out = be.update_dense_on_binary_pre(jnp.asarray(START), jnp.asarray(SPIKES), jnp.asarray(POST_TRACE))
        want = START.copy()
        want[FIRED] += POST_TRACE
        _close(out, want)

    def test_gradients_pass_where_no_bound_clipped(self):
        g = jax.grad(lambda w: be.update_dense_on_binary_pre(w, jnp.asarray(SPIKES), jnp.asarray(POST_TRACE),
                                                             0., 1.).sum())(jnp.asarray(START))
        updated = START + np.where(FIRED[:, None], POST_TRACE, 0)
        _close(g, ((updated > 0) & (updated < 1)).astype(np.float32))


class TestUnits:
    @pytest.fixture
    def u(self):
        # Only the tests that take it need brainunit (the units extra).
        return pytest.importorskip('brainunit')

    def test_weights_keep_their_unit_and_the_trace_is_converted_into_it(self, u):
        w = jnp.asarray(START) * u.mS
        out = be.update_dense_on_binary_pre(w, jnp.asarray(SPIKES), jnp.asarray(POST_TRACE) * u.siemens,
                                            0. * u.mS, 1000. * u.mS)
        assert out.unit == u.mS
        want = START.copy()
        want[FIRED] += POST_TRACE * 1000.
        _close(out.mantissa, np.clip(want, 0., 1000.))

    def test_every_update_takes_quantities(self, u):
        A = ej.CSR.fromdense(np.ones((4, 2), np.float32))
        data = jnp.asarray(START.reshape(-1)) * u.mV
        out = be.update_csr_on_binary_pre(data, A.indices, A.indptr, jnp.asarray(SPIKES),
                                          jnp.asarray(POST_TRACE) * u.mV, shape=(4, 2))
        assert out.unit == u.mV
        rows, ptr, pos = ej.csr_column_view(A.indices, A.indptr, shape=(4, 2))
        out = be.update_csr_on_binary_post(data, rows, ptr, pos, jnp.asarray(PRE_TRACE) * u.mV,
                                           jnp.asarray(SPIKES[:2]), shape=(4, 2))
        assert out.unit == u.mV
        out = be.update_dense_on_binary_post(jnp.asarray(START) * u.mV, jnp.asarray(PRE_TRACE) * u.mV,
                                             jnp.asarray(SPIKES[:2]))
        assert out.unit == u.mV

    def test_csr_and_csc_from_a_dense_quantity_keep_its_unit(self, u):
        q = jnp.asarray(W) * u.mV
        for cls in (ej.CSR, ej.CSC, be.CSR, be.CSC):
            A = cls.fromdense(q)
            assert A.data.unit == u.mV
            _close(A.todense().to_decimal(u.mV), W)

    def test_a_trace_of_another_dimension_is_brainunits_error(self, u):
        with pytest.raises(u.UnitMismatchError):
            be.update_dense_on_binary_pre(jnp.asarray(START) * u.mV, jnp.asarray(SPIKES),
                                          jnp.asarray(POST_TRACE) * u.nS)


class TestErrorsAndConfig:
    def test_shapes_that_do_not_fit_are_an_assertion_error_and_a_value_error(self):
        bad = be.BinaryArray(np.array([[0, 1, 1], [1, 0, 1]], np.uint8))
        for cls in (AssertionError, ValueError, be.MathError, be.BrainEventError):
            with pytest.raises(cls):
                bad @ np.ones((2, 2), np.float32)
        with pytest.raises(AssertionError, match='post_trace'):
            be.update_dense_on_binary_pre(jnp.asarray(START), jnp.asarray(SPIKES), jnp.ones(3))

    def test_a_0d_or_3d_binary_array_is_a_math_error(self):
        for value in (np.array(1, np.uint8), np.zeros((2, 2, 2), np.uint8)):
            with pytest.raises(be.MathError, match='1-D or 2-D'):
                be.BinaryArray(value) @ np.ones((2, 2), np.float32)

    def test_compute_capability_takes_brainevents_spellings(self):
        try:
            be.config.set_compute_capability(['8.0', 'sm_90a', 'compute_80'])
            assert be.config.get_compute_capability() == ['sm_80', 'sm_90a']
            with pytest.raises(ValueError, match='invalid compute capability'):
                be.config.set_compute_capability('eighty')
            with pytest.raises(be.UnsupportedArchError):
                be.config.set_compute_capability('1.0')
            assert be.config.get_compute_capability() == ['sm_80', 'sm_90a']  # a bad value changes nothing
        finally:
            be.config.set_compute_capability(None)
        assert be.config.get_compute_capability() is None
        be.config.prefer_system_nvcc()
        with pytest.raises(TypeError):
            be.config.prefer_system_nvcc('yes')


# Every name, the primitive objects (``*_p``) too; ``config`` is a module.
PICKLED = [n for n in be.__all__ if not isinstance(getattr(be, n), types.ModuleType)]


@pytest.mark.parametrize('name', PICKLED)
def test_every_public_name_pickles_by_reference(name):
    obj = getattr(be, name)
    assert pickle.loads(pickle.dumps(obj)) is obj


def test_a_raised_brainevent_error_pickles_and_keeps_its_classes():
    try:
        be.BinaryArray(np.ones((2, 3), np.float32)) @ np.ones((2, 2), np.float32)
    except be.MathError as e:
        raised = e
    again = pickle.loads(pickle.dumps(raised))
    assert type(again) is type(raised) and isinstance(again, AssertionError) and str(again) == str(raised)
    assert issubclass(be.KernelNotAvailableError, errors.BackendNotFoundError)
