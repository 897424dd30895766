"""PD14 over processes: each process's block holds exactly the one-process network's synapses onto its columns,
and two processes give the one-process run's spikes, spike for spike.

The processes run under ``eventjax.distributed.spawn`` with a deadline: a hang is a failure, and every process
group is killed (SIGKILL, which no inherited disposition can ignore) before the test returns. They get an
environment of their own (no inherited JAX, XLA or numba settings).
"""

import os

import jax.numpy as jnp
import numpy as np
import pytest
from examples.microcircuit import blocks, network, owner_split
from examples.microcircuit import distributed as mc
from examples.microcircuit import params as P

import eventjax as ej
from eventjax import distributed as ejd


def whole_network(derived, seed):
    conn = network.build_connectivity(derived, seed)
    rows = np.repeat(np.arange(conn.n), np.diff(conn.indptr))
    return conn, rows


def by_synapse(rows, columns, delays, weights):
    """The synapses in (row, column, delay) order, ties in stored order (the order a ring entry's adds take)."""
    order = np.lexsort((delays, columns, rows))
    return rows[order], columns[order], delays[order], weights[order]


class TestBlocks:
    @pytest.mark.parametrize('processes', [2, 3])
    def test_the_blocks_put_together_are_the_one_process_network(self, processes):
        derived = P.derive(0.02, 0.05, 'dc')
        conn, rows = whole_network(derived, 7)
        width = ejd.block_size(conn.n, processes, 32)
        parts = []
        for p in range(processes):
            own = ejd.own_rows(conn.n, processes, p, 32)
            block = blocks.draw_block(derived, 7, own.start, own.stop, width).assemble()
            assert block.max_delay == conn.max_delay
            assert np.all((block.columns >= own.start) & (block.columns < own.stop))
            parts.append((np.repeat(np.arange(conn.n), np.diff(block.indptr)), block.columns, block.delays,
                          block.weights[:block.nnz]))
        together = by_synapse(*(np.concatenate(x) for x in zip(*parts)))
        one = by_synapse(rows, conn.indices, conn.delays, conn.weights)
        for got, want in zip(together, one):
            np.testing.assert_array_equal(got, want)

    def test_a_block_s_rows_are_in_two_parts_each_sorted_by_delay(self):
        derived = P.derive(0.02, 0.05, 'dc')
        n = int(derived.num_neurons.sum())
        block = blocks.draw_block(derived, 3, 300, 1000, 704).assemble()
        owner_split.check_splits(block.indptr, block.offsets[:block.nnz], block.splits, block.split_column - 300,
                                 block.width)
        rows = np.repeat(np.arange(n), np.diff(block.indptr))
        second = np.arange(block.nnz) >= block.splits[rows]
        assert 0.3 < second.mean() < 0.7
        same_part = (np.diff(rows) == 0) & (np.diff(second) == 0)
        assert np.all(np.diff(block.delays)[same_part] >= 0)

    def test_a_padded_block_holds_the_same_synapses(self):
        derived = P.derive(0.02, 0.05, 'dc')
        exact = blocks.draw_block(derived, 3, 0, 500).assemble()
        draw = blocks.draw_block(derived, 3, 0, 500)
        nnz = draw.nnz
        block = draw.assemble(nnz + 100)
        assert block.nnz == exact.nnz == nnz and block.offsets.size == block.weights.size == nnz + 100
        np.testing.assert_array_equal(block.indptr, exact.indptr)
        np.testing.assert_array_equal(block.offsets[:nnz], exact.offsets)
        np.testing.assert_array_equal(block.weights[:nnz], exact.weights)
        with pytest.raises(ValueError, match='capacity'):
            blocks.draw_block(derived, 3, 0, 500).assemble(nnz - 1)

    def test_columns_outside_the_network_are_refused(self):
        with pytest.raises(ValueError, match=r'within the network'):
            blocks.draw_block(P.derive(0.01, 0.01, 'dc'), 3, 0, 10_000)


def test_packed_spikes_deliver_the_ring_of_bool_spikes_bit_for_bit():
    derived = P.derive(0.02, 0.05, 'dc')
    block = blocks.draw_block(derived, 5, 0, 800, 800).assemble()
    n = block.indptr.size - 1
    spikes = np.random.default_rng(0).random(n) < 0.05
    words = ej.bitpack(jnp.asarray(spikes))
    args = tuple(jnp.asarray(x) for x in (block.weights, block.offsets, block.indptr.astype(np.int32),
                                          block.splits.astype(np.int32)))
    ring = jnp.asarray(np.random.default_rng(1).random((block.max_delay + 1, 800)), jnp.float32)
    got = owner_split.owner_split_deliver_words(ring + 0, words, *args, 3)
    W = ej.DelayedCSR(ej.CSRDelayLayout(args[0], None, args[2], None, args[1], shape=(n, 800),
                                        ring_length=block.max_delay + 1))
    want = owner_split.owner_split_deliver(ring + 0, jnp.asarray(spikes), W, args[3], 3)
    np.testing.assert_array_equal(np.asarray(got), np.asarray(want))


def own_environment():
    return {'PATH': os.environ.get('PATH', '/usr/bin:/bin'), 'HOME': os.environ.get('HOME', '/tmp'),
            'NUMBA_NUM_THREADS': '1'}


@pytest.mark.parametrize('drive, k_scale', [('dc', '1'), ('poisson', '0.02')])
def test_two_processes_give_the_one_process_spikes(tmp_path, drive, k_scale):
    argv = ['--processes', '2', '--scale', '0.02', '--k-scale', k_scale, '--t-sim', '60', '--t-presim', '20',
            '--drive', drive, '--spikes-dir', str(tmp_path), '--timeout', '150', '--heartbeat-timeout', '30']
    args = mc.parse(argv)
    assert mc.launch(argv, args, env=own_environment()) == 0
    got = mc.job_spikes(str(tmp_path), 2)
    want = mc.one_process_spikes(args)
    assert want[0].size > 50  # a network that fires: the comparison means something
    assert mc.same_spikes(got, want)


def test_a_bad_scale_is_refused_before_any_process_starts(capsys):
    with pytest.raises(SystemExit) as exit_:
        mc.main(['--scale', '2'])
    assert exit_.value.code == 2 and '--scale' in capsys.readouterr().err


def test_an_exchange_every_second_step_gives_the_one_process_spikes(tmp_path, capsys):
    # delays of at least 2 steps: the block exchanges every second update (601 steps: a period of one at the end)
    argv = ['--processes', '1', '--scale', '0.02', '--k-scale', '0.02', '--t-sim', '60.1', '--t-presim', '20',
            '--drive', 'poisson', '--delay-min', '2', '--spikes-dir', str(tmp_path)]
    args = mc.parse(argv)
    assert mc.member(args, False) == 0
    assert 'an exchange every 2' in capsys.readouterr().out
    got = mc.job_spikes(str(tmp_path), 1)
    want = mc.one_process_spikes(args)
    assert want[0].size > 50
    assert mc.same_spikes(got, want)


@pytest.mark.parametrize('argv, says', [(['--delay-min', '0'], '--delay-min must be at least 1'),
                                        (['--delay-min', '2', '--interval', '3'], '--interval must lie in')])
def test_a_bad_delay_or_interval_is_refused(capsys, argv, says):
    with pytest.raises(SystemExit) as exit_:
        mc.parse(argv)
    assert exit_.value.code == 2 and says in capsys.readouterr().err


def test_the_projection_divides_the_measured_compute_and_adds_the_modelled_allgather():
    from examples.microcircuit import bench_distributed as bd

    args = bd.parse(['--delay-min', '2', '--alpha-us', '1', '--bandwidth-gbs', '10'])
    one = {'processes': 1, 'transport': 'mpi', 'neurons': 64, 'scale': 1.0, 'step_us': 110.0, 'exchange_us': 10.0,
           'rtf': 1.1}
    lines = bd.tables([one, {'processes': 2, 'error': 'timed out'}], args)
    assert any('| 2 | error: timed out' in line for line in lines)
    rows = {line.split('|')[1].strip(): line.split('|')[2:-1] for line in lines if line.startswith('| ')}
    # 4 nodes: compute 100 / 4; all-gather of 2 * 64 / 8 = 16 bytes: 2 hops of 1 us + 3/4 * 16 B / 10 GB/s,
    # once every 2 updates
    exchange = (2 * 1.0 + 0.75 * 16 / 1e4) / 2
    assert float(rows['4'][0]) == 25.0 and abs(float(rows['4'][1]) - exchange) < 0.06
    assert rows['2'][-1].strip() == '0.53' and rows['1'][-1].strip() == '0.67'
