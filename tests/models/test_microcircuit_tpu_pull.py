"""PD14 with the TPU's delivery at read time (``Runner(backend='pallas', delivery='pull')``), in Pallas's TPU
interpreter: the ring delivery's spikes, and its refusals."""

import doctest

import numpy as np
import pytest
from examples.microcircuit import simulation


def _model(sort_rows=True):
    return simulation.build(0.02, None, 'poisson', 3, np.float32, split=False, whole_tiles=True,
                            column_multiple=128, sort_rows=sort_rows)


@pytest.mark.long  # 600 updates in Pallas's interpreter; the kernel's own tests are in the default run
def test_the_delivery_at_read_time_spikes_as_the_ring_delivery():
    model = _model()
    ring = simulation.Runner(model, 'jax', 3)
    pulled = simulation.Runner(model, 'pallas', 3, delivery='pull')
    assert ring.delivery == 'push' and pulled.delivery == 'pull' and len(pulled.state) == 5  # no ring held
    (steps, ids, _), (steps_p, ids_p, _) = (r.run(60.0, progress=None) for r in (ring, pulled))
    assert ids.size > 20
    np.testing.assert_array_equal(steps, steps_p)
    np.testing.assert_array_equal(ids, ids_p)
    # the sums run in another order: the currents agree to float32 rounding
    np.testing.assert_allclose(np.asarray(pulled.state[1]), np.asarray(ring.state[1]), rtol=1e-5, atol=1e-4)


def test_more_spikes_in_a_step_than_it_holds_raise_after_the_run():
    runner = simulation.Runner(_model(), 'pallas', 3, delivery='pull', max_spikes=1)
    with pytest.raises(ValueError, match='larger max_spikes'):
        runner.run(45.0, progress=None)  # two neurons first fire in one step at 40.7 ms


def test_rows_split_in_two_parts_are_refused_naming_the_fix():
    with pytest.raises(ValueError, match='split=False and sort_rows=True'):
        simulation.Runner(simulation.build(0.01, None, 'dc', 3, np.float32), 'pallas', delivery='pull')


def test_the_row_sort_example_runs():
    assert doctest.run_docstring_examples(simulation.sort_by_offset, {'np': np}) is None
    w, o = np.array([1., 2., 3., 4.], np.float32), np.array([9, 7, 7, 5], np.int32)
    simulation.sort_by_offset(w, o, np.array([0, 3, 4]))
    assert o.tolist() == [7, 7, 9, 5] and w.tolist() == [2., 3., 1., 4.]  # stable within a row



def test_a_ring_held_flat_and_longer_spikes_as_the_two_dimensional_ring():
    # On pallas the ring is held flat, a multiple of 8 steps long (the TPU kernel's rows of 128 without a
    # relayout), longer than the longest delay needs; on the jax kernel here: the same spikes, the same sums.
    model = _model(sort_rows=False)
    ring, flat = simulation.Runner(model, 'jax', 3), simulation.Runner(model, 'jax', 3, flat_ring=True)
    assert simulation.Runner(model, 'pallas', 3).state[3].ndim == 1
    columns = model.W.shape[1]
    assert flat.state[3].shape == (-(-model.W.ring_length // 8) * 8 * columns,)
    assert ring.state[3].shape == (model.W.ring_length, columns) and model.W.ring_length % 8
    (steps, ids, _), (steps_f, ids_f, _) = (r.run(60.0, progress=None) for r in (ring, flat))
    assert ids.size > 20
    np.testing.assert_array_equal(steps, steps_f)
    np.testing.assert_array_equal(ids, ids_f)
    np.testing.assert_array_equal(np.asarray(flat.state[1]), np.asarray(ring.state[1]))
