"""PD14's delivery at read time: each step's input is the ring delivery's slot bit for bit, the dense sum of the
arriving synapses, and the runs spike as the ring delivery's."""

import doctest

import jax.numpy as jnp
import numpy as np
import pytest
from examples.microcircuit import chunk, owner_split, pull, simulation

import eventjax as ej
from tests.models.test_microcircuit import split_layout


def dense_inputs(W, spikes, steps):
    """NumPy, float64: the input of each step, the weights of the synapses whose spike plus delay lands on it."""
    n = W.shape[1]
    offsets, data = np.asarray(W.layout.offsets), np.asarray(W.layout.data, np.float64)
    rows = np.repeat(np.arange(W.shape[0]), np.diff(np.asarray(W.layout.indptr)))
    out = np.zeros((steps + W.ring_length, n))
    for s in range(steps):
        hit = spikes[s][rows]
        np.add.at(out, (s + offsets[hit] // n, offsets[hit] % n), data[hit])
    return out[:steps]


def both_inputs(W, splits, spikes, split_column=None):
    """The input each step reads: from the ring (``owner_split``, slot cleared on reading) and from ``pull``."""
    length, n = W.ring_length, W.shape[1]
    lay = pull.layout(W, splits, n // 2 if split_column is None else split_column)
    splits = jnp.asarray(splits, jnp.int32)
    ring, (inp, hist, counts) = W.init_ring(), pull.init_state(n, length, jnp.float32)
    pushed, pulled = [], []
    for t, s in enumerate(spikes):
        pushed.append(np.asarray(ring[t % length]))
        ring = owner_split.owner_split_deliver(ring.at[t % length].set(0), jnp.asarray(s), W, splits, t)
        pulled.append(np.asarray(inp[0]))
        inp, hist, counts = pull.deliver(inp * 0, hist, counts, jnp.asarray(s), lay, t)
    return np.array(pushed), np.array(pulled)


@pytest.mark.parametrize('rate', [0.0, 0.002, 0.3])  # no event, few (one thread sums) and many (two threads)
@pytest.mark.parametrize('length', [2, 9])  # delays of one step only, and of 1-8
def test_each_step_s_input_is_the_ring_slot_bit_for_bit_and_the_dense_sum(rate, length):
    rng = np.random.default_rng(11)
    m, n, steps = 400, 300, 3 * length
    W, _, splits = split_layout(rng, m, n, 200, length)
    spikes = rng.random((steps, m)) < rate
    pushed, pulled = both_inputs(W, splits, spikes)
    np.testing.assert_array_equal(pulled, pushed)
    np.testing.assert_allclose(pulled, dense_inputs(W, spikes, steps), rtol=1e-5, atol=1e-4)
    assert (np.count_nonzero(pulled) > 0) == (rate > 0)


def test_rows_without_synapses_or_with_one_part_empty_deliver_nothing_of_theirs():
    # row 0: no synapse; row 1: only columns below the split (4); row 2: only the others
    n, length = 8, 4
    offsets = np.array([1 * n + 0, 3 * n + 3, 2 * n + 5, 2 * n + 7], np.int32)
    W = ej.DelayedCSR(ej.CSRDelayLayout(jnp.array([1., 2., 3., 4.]), None, jnp.array([0, 0, 2, 4]), None,
                                        jnp.asarray(offsets), shape=(3, n), ring_length=length))
    splits = np.array([0, 2, 2])
    spikes = np.zeros((6, 3), bool)
    spikes[0] = True
    pushed, pulled = both_inputs(W, splits, spikes, split_column=4)
    np.testing.assert_array_equal(pulled, pushed)
    np.testing.assert_array_equal(pulled, dense_inputs(W, spikes, 6))


def test_delay_ends_count_each_part_s_synapses_up_to_each_delay():
    rng = np.random.default_rng(3)
    n, length = 50, 7
    W, _, splits = split_layout(rng, 30, n, 40, length)
    offsets, indptr = np.asarray(W.layout.offsets), np.asarray(W.layout.indptr)
    ends = pull.delay_ends(offsets, indptr, splits, n, length)
    assert ends.dtype == np.uint16 and ends.shape == (30, 2, length)
    for r in range(30):
        for part, (lo, hi) in enumerate([(indptr[r], splits[r]), (splits[r], indptr[r + 1])]):
            delays = offsets[lo:hi] // n
            np.testing.assert_array_equal(ends[r, part], [(delays <= d).sum() for d in range(length)])


def test_delay_ends_widen_past_parts_of_2_16_synapses():
    offsets = np.full(70_000, 3 + 2 * 4, np.int32)  # one row, delay 2 onto column 3, all below the split
    ends = pull.delay_ends(offsets, np.array([0, 70_000]), np.array([70_000]), 4, 3)
    assert ends.dtype == np.uint32
    assert ends[0].tolist() == [[0, 0, 70_000], [0, 0, 0]]


@pytest.mark.parametrize('bad', [-1, 3, 12])  # dropped, delay 0, delay past the ring
def test_delay_ends_refuse_delays_outside_1_to_the_ring(bad):
    offsets = np.array([4, bad], np.int32)
    with pytest.raises(ValueError, match=r'every delay in \[1, 3\)'):
        pull.delay_ends(offsets, np.array([0, 2]), np.array([2]), 4, 3)


def test_layout_counts_columns_from_each_part_s_first_and_widens_past_2_16():
    rng = np.random.default_rng(5)
    n, length = 50, 7
    W, _, splits = split_layout(rng, 30, n, 40, length)
    lay = pull.layout(W, splits, n // 2)
    offsets = np.asarray(W.layout.offsets)
    second = np.arange(offsets.size) >= np.repeat(splits, 40)
    assert lay.cols.dtype == np.uint16 and int(lay.split[0]) == n // 2
    np.testing.assert_array_equal(np.asarray(lay.cols) + second * (n // 2), offsets % n)
    np.testing.assert_array_equal(lay.ends, pull.delay_ends(offsets, np.asarray(W.layout.indptr), splits, n, length))
    wide = ej.DelayedCSR(ej.CSRDelayLayout(jnp.ones(1), None, jnp.array([0, 1]), None,
                                           jnp.array([70_000 + 69_999], jnp.int32), shape=(1, 70_000), ring_length=2))
    lay = pull.layout(wide, np.array([1]), 70_000)  # one part 70,000 columns wide
    assert lay.cols.dtype == np.uint32 and lay.cols.tolist() == [69_999]


@pytest.mark.parametrize('split_column', [4, 6])
def test_layout_refuses_synapses_on_the_other_side_of_the_split(split_column):
    n = 8  # row 0: columns 3 | 5, stored split at synapse 1: only split_column 4 or 5 fits
    W = ej.DelayedCSR(ej.CSRDelayLayout(jnp.ones(2), None, jnp.array([0, 2]), None,
                                        jnp.array([n + 3, n + 5], jnp.int32), shape=(1, n), ring_length=2))
    if split_column == 4:
        assert pull.layout(W, np.array([1]), 4).cols.tolist() == [3, 1]
    else:
        with pytest.raises(ValueError, match='1 synapses lie on the other side of split_column 6'):
            pull.layout(W, np.array([1]), split_column)
    with pytest.raises(ValueError, match='split_column must be in'):
        pull.layout(W, np.array([1]), 9)
    for split in (-1, 3):  # outside row 0's [0, 2]: a part would be read past the row
        with pytest.raises(ValueError, match=r'layout\(\): each split must lie within its row'):
            pull.layout(W, np.array([split]), 4)


@pytest.mark.parametrize('scale, k_scale, drive, ms', [(0.05, 0.5, 'dc', 300.0), (0.02, None, 'poisson', 100.0)])
def test_the_runs_spike_as_the_ring_delivery_s(scale, k_scale, drive, ms):
    model = simulation.build(scale, k_scale, drive, 5, np.float32)
    out = []
    for delivery in ('push', 'pull'):
        runner = simulation.Runner(model, 'numba', 5, delivery=delivery)
        out.append((*runner.run(ms, progress=None)[:2], np.asarray(runner.state[0])))
    assert out[0][1].size > 100
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


def test_runner_refuses_an_unknown_delivery():
    model = simulation.build(0.01, None, 'dc', 5, np.float32)
    with pytest.raises(ValueError, match="'pull' or 'push'"):
        simulation.Runner(model, 'numba', delivery='ring')


def test_the_modules_examples_run():
    assert doctest.testmod(pull).failed == 0
    assert doctest.testmod(chunk).failed == 0


@pytest.mark.parametrize('n', [1, 32, 77])
def test_word_hits_are_the_set_bits_in_order_and_never_past_n(n):
    rng = np.random.default_rng(n)
    flags = rng.random((5, n)) < 0.2
    flags[2] = False
    padded = np.zeros((5, -(-n // 32) * 32), bool)
    padded[:, :n] = flags
    words = np.packbits(padded, axis=1, bitorder='little').view('<u4')  # bit j % 32 of word j // 32
    words[:, -1] |= np.uint32(2 ** 31) if n % 32 else np.uint32(0)  # a bit past n: not a neuron
    steps, ids = chunk.word_hits(words, n)
    np.testing.assert_array_equal(np.stack([steps, ids]), np.nonzero(flags))


def chunk_against_scan(threads, drive):
    import numba

    model = simulation.build(0.05, 0.5, drive, 5, np.float32)
    before = numba.get_num_threads()
    numba.set_num_threads(min(threads, numba.config.NUMBA_NUM_THREADS))
    try:
        out = []
        for delivery in ('push', 'pull'):
            runner = simulation.Runner(model, 'numba', 5, delivery=delivery)
            out.append((*runner.run(120.0, progress=None)[:2], *map(np.asarray, runner.state[:3])))
    finally:
        numba.set_num_threads(before)
    assert out[0][1].size > 50
    for a, b in zip(*out):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize('threads', [1, 2])
def test_a_chunk_gives_the_scan_s_spikes_and_state_with_one_or_two_threads(threads):
    chunk_against_scan(threads, 'dc')


@pytest.mark.parametrize('threads', [1, 2])
def test_a_chunk_s_steps_shared_by_two_threads_give_the_scan_s_spikes(threads, monkeypatch):
    """The path of a full-scale network (threads claiming each step's pieces of work), forced at this size;
    on one thread the one loop does every piece."""
    monkeypatch.setattr(chunk, 'PARALLEL_MIN_NEURONS', 0)
    chunk_against_scan(threads, 'poisson')


def test_bench_delivery_refuses_bad_arguments_and_a_silent_recording(capsys):
    from examples.microcircuit import bench_delivery

    with pytest.raises(SystemExit) as stop:
        bench_delivery.main(['--pairs', '0'])
    assert stop.value.code == 2
    assert '--pairs and --ms must be positive' in capsys.readouterr().err
    # 20 ms at scale 0.02 after a 20 ms warm-up: no neuron fires yet, so there is no event to time
    assert bench_delivery.main(['--scale', '0.02', '--ms', '20', '--t-presim', '20', '--threads', '1']) == 2
    assert 'no synaptic event' in capsys.readouterr().err
