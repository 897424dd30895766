"""IndexedEvents: an index list that converts to and from EventArray and multiplies with `@`."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import eventjax as ej

DENSE = np.array([[0.0, 2.0, 0.0], [3.0, 0.0, 4.0], [0.0, 0.0, 0.0], [1.0, 1.0, 0.0]], np.float32)


class TestIndexedEvents:
    def test_compact_and_back_is_the_identity(self):
        spikes = np.array([False, True, False, True])
        ev = ej.EventArray(spikes).compact(3)
        assert isinstance(ev, ej.IndexedEvents) and ev.capacity == 3 and ev.shape == (4,)
        np.testing.assert_array_equal(ev.to_event_array().value, spikes)

    def test_events_times_a_csr_visit_its_rows(self):
        spikes = np.array([True, False, False, True])
        got = ej.EventArray(spikes).compact(2) @ ej.CSR.fromdense(DENSE)
        np.testing.assert_allclose(got, spikes @ DENSE)

    def test_a_csc_times_events_and_a_csr_times_events_agree_with_dense(self):
        spikes = np.array([True, False, True])
        ev = ej.EventArray(spikes).compact(3)
        np.testing.assert_allclose(ej.CSC.fromdense(DENSE.T).T @ ev, DENSE @ spikes)  # stored rows are events
        np.testing.assert_allclose(ej.CSR.fromdense(DENSE) @ ev, DENSE @ spikes)
        np.testing.assert_allclose(ej.CSC.fromdense(DENSE) @ ev, DENSE @ spikes)

    def test_other_operands_get_the_expanded_spikes(self):
        spikes = np.array([True, False, True, True])
        ev = ej.EventArray(spikes).compact(4)
        np.testing.assert_allclose(ev @ jnp.asarray(DENSE), spikes @ DENSE)
        np.testing.assert_allclose(jnp.asarray(DENSE.T) @ ev, DENSE.T @ spikes)

    def test_a_pytree_through_jit_with_an_overflow_flag(self):
        A = ej.CSR.fromdense(DENSE)

        @jax.jit
        def step(spikes):
            ev = ej.EventArray(spikes).compact(1)
            return ev.overflowed, ev @ A

        over, y = step(jnp.array([True, True, False, False]))
        assert bool(over) and np.isnan(y).all()
        over, y = step(jnp.array([False, True, False, False]))
        assert not bool(over)
        np.testing.assert_allclose(y, DENSE[1])

    def test_a_mismatched_size_names_the_sides(self):
        ev = ej.EventArray(np.array([True, False])).compact(1)
        with pytest.raises(ValueError, match='IndexedEvents of 2 neurons cannot multiply'):
            ev @ ej.CSR.fromdense(DENSE)
