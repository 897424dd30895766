"""The TPU delivery at read time (``pallas_tpu_pull``) in Pallas's TPU interpreter, against a NumPy sum."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from eventjax.kernels.delay import pallas_tpu_pull as pp


def _network(seed, m, columns, length, targets=None):
    """Rows of 0 to 40 synapses (one of 300, over every delay), each sorted by packed offset."""
    rng = np.random.default_rng(seed)
    lengths = rng.integers(0, 40, m)
    lengths[m // 2] = 300
    indptr = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int32)
    targets = columns if targets is None else targets
    offsets = np.concatenate([np.sort(rng.integers(1, length, k) * columns + rng.integers(0, targets, k))
                              for k in lengths]).astype(np.int32)
    data = rng.normal(size=offsets.size).astype(np.float32)
    return data, offsets, indptr


def _want(data, offsets, indptr, history, t, columns, length):
    """The synapses of the rows that spiked ``d`` steps before ``t`` with delay ``d``, summed in float64."""
    out = np.zeros(columns)
    for ts, rows in enumerate(history):
        d = t - ts
        for r in rows if 0 < d < length else ():
            for e in range(indptr[r], indptr[r + 1]):
                if offsets[e] // columns == d:
                    out[offsets[e] % columns] += data[e]
    return out


def _run(data, offsets, indptr, raster, *, columns, length, groups, max_spikes, **options):
    """The inputs read at each step of ``raster`` (the spikes recorded after each read), jitted."""
    bounds = jnp.asarray(pp.build_bounds(offsets, indptr, columns=columns, length=length, groups=groups))

    @jax.jit
    def step(state, s, t, data, offsets, bounds):
        table, dropped = state
        inp = pp.pull_input(data, offsets, bounds, table, t, columns=columns, groups=groups, interpret=True,
                            **options)
        return pp.record(table, dropped, s, t), inp

    state = pp.init_spikes(length, max_spikes, indptr.shape[0] - 1)
    inputs = []
    for t, s in enumerate(raster):
        state, inp = step(state, jnp.asarray(s), jnp.int32(t), pp.as_rows(jnp.asarray(data)),
                          pp.as_rows(jnp.asarray(offsets)), bounds)
        inputs.append(np.asarray(inp))
    return inputs, int(state[1])


class TestInputsMatchTheNumpySum:
    @pytest.mark.parametrize('columns, groups, options', [
        pytest.param(1100, 3, dict(capacity=2), marks=pytest.mark.long),  # odd columns, three groups, rounds
        (300, 1, dict(capacity=4, tile=256)),  # one group, two products a round
    ])
    def test_each_step_reads_what_arrived_from_every_held_row(self, columns, groups, options):
        m, length = 23, 7
        data, offsets, indptr = _network(0, m, columns, length)
        rng = np.random.default_rng(1)
        raster = rng.random((12, m)) < 0.3
        raster[3], raster[5] = False, True  # an empty step and a step where every row spikes
        inputs, dropped = _run(data, offsets, indptr, raster, columns=columns, length=length, groups=groups,
                               max_spikes=m, **options)
        history = [np.flatnonzero(s) for s in raster]
        assert dropped == 0
        for t, got in enumerate(inputs):
            want = _want(data, offsets, indptr, history, t, columns, length)
            assert got.shape[0] >= columns and not np.any(got[columns:])
            np.testing.assert_allclose(got[:columns], want, rtol=1e-5, atol=1e-5)
        assert np.any(inputs[6])  # the full step delivers

    def test_a_nan_weight_reaches_its_own_target_only(self):
        m, columns, length = 9, 700, 5
        data, offsets, indptr = _network(2, m, columns, length)
        bad = indptr[m // 2] + 3
        data[bad] = np.nan
        raster = np.zeros((length + 1, m), bool)
        raster[0, m // 2] = True
        inputs, _ = _run(data, offsets, indptr, raster, columns=columns, length=length, groups=2, max_spikes=4,
                         capacity=4)
        d, target = offsets[bad] // columns, offsets[bad] % columns
        got = inputs[d][:columns]
        assert np.isnan(got[target]) and np.isfinite(np.delete(got, target)).all()
        want = _want(data, offsets, indptr, [[m // 2]], d, columns, length)
        np.testing.assert_allclose(np.delete(got, target), np.delete(want, target), rtol=1e-5, atol=1e-5)


class TestTheSpikeTable:
    def test_spikes_past_the_rows_a_step_holds_are_counted_as_dropped(self):
        table, dropped = pp.record(*pp.init_spikes(4, 3, 6), jnp.array([1, 1, 0, 1, 1, 1], bool), 6)
        assert table[2].tolist() == [0, 1, 3] and int(dropped) == 2
        assert (np.asarray(table)[[0, 1, 3]] == 6).all()

    def test_a_step_without_spikes_clears_its_slot(self):
        table, _ = pp.record(*pp.init_spikes(2, 2, 3), jnp.array([1, 1, 0], bool), 0)
        table, dropped = pp.record(table, jnp.int32(0), jnp.zeros(3, bool), 2)
        assert table.tolist() == [[3, 3], [3, 3]] and int(dropped) == 0


class TestBadInput:
    def test_unsorted_rows_are_refused_naming_the_fix(self):
        with pytest.raises(ValueError, match='sorted by packed offset'):
            pp.build_bounds(np.array([600, 300]), np.array([0, 2]), columns=256, length=4)

    def test_rows_out_of_order_across_blocks_are_refused(self):
        with pytest.raises(ValueError, match='sorted by packed offset'):
            pp.build_bounds(np.array([300, 600, 300]), np.array([0, 3]), columns=256, length=4, block=2)
        bounds = pp.build_bounds(np.array([300, 600, 300]), np.array([0, 2, 3]), columns=256, length=4, groups=1,
                                 block=2)
        # (row, delay): its start and end; row 2, the table's "none", holds nothing
        assert bounds.reshape(-1, 16)[:12, :2].tolist() == [[0, 0], [0, 1], [1, 2], [2, 2], [2, 2], [2, 3],
                                                            [3, 3], [3, 3], [3, 3], [3, 3], [3, 3], [3, 3]]

    def test_a_delay_outside_the_ring_is_refused(self):
        with pytest.raises(ValueError, match=r'every delay must lie in \[1, 4\)'):
            pp.build_bounds(np.array([5, 1030]), np.array([0, 2]), columns=256, length=4)

    def test_a_tile_that_does_not_divide_the_slots_is_refused(self):
        bounds = jnp.asarray(pp.build_bounds(np.array([300]), np.array([0, 1]), columns=256, length=3, groups=1))
        rows = pp.as_rows(jnp.ones(1)), pp.as_rows(jnp.array([300], jnp.int32))
        with pytest.raises(ValueError, match='tile must be a multiple of 128'):
            pp.pull_input(*rows, bounds, pp.init_spikes(3, 2, 1)[0], 1, columns=256, groups=1, capacity=4, tile=384,
                          interpret=True)
        with pytest.raises(ValueError, match='rows of 128 synapses'):
            pp.pull_input(jnp.ones(128), jnp.ones(128, jnp.int32), bounds, pp.init_spikes(3, 2, 1)[0], 1,
                          columns=256, groups=1, interpret=True)

    def test_more_than_15_groups_are_refused(self):
        with pytest.raises(ValueError, match=r'groups must lie in \[1, 15\]'):
            pp.build_bounds(np.array([300]), np.array([0, 1]), columns=256, length=3, groups=16)
