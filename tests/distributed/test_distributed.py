"""The network on JAX's multi-process runtime: real processes on localhost, gloo collectives.

Every process these tests start runs under ``distributed.spawn`` or
``subprocess.run`` with a deadline, so a hang becomes a failure and nothing
outlives the test.
"""

import os
import pathlib
import re
import subprocess
import sys
import textwrap
import time

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from eventjax import distributed
from eventjax.errors import CollectiveError, ConfigMismatchError

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
EXAMPLE = str(ROOT / 'docs' / 'examples' / 'cuba_distributed.py')
ENV = dict(os.environ, PYTHONPATH=os.pathsep.join([str(ROOT / 'src'), os.environ.get('PYTHONPATH', '')]))
SMALL = ['--neurons', '1003', '--duration', '30', '--heartbeat-timeout', '5', '--init-timeout', '60']


def describe(results):
    return '\n'.join(f'--- process {r.process_id}: {r.returncode}\n{r.output[-3000:]}' for r in results)


class TestPartition:
    def test_blocks_cover_every_neuron_once(self):
        for n, parts in [(1003, 2), (1000, 3), (8, 4), (4000, 1)]:
            rows = [distributed.own_rows(n, parts, i) for i in range(parts)]
            assert [i for r in rows for i in r] == list(range(n))
            assert all(len(r) <= distributed.block_size(n, parts) for r in rows)
            assert distributed.block_size(n, parts) % 8 == 0

    def test_all_gather_spikes_returns_the_spikes_on_one_device(self):
        mesh = Mesh(np.array(jax.devices()[:1]), ('p',))
        f = jax.shard_map(lambda s: distributed.all_gather_spikes(s, 'p'), mesh=mesh, in_specs=P('p'),
                          out_specs=P('p'))
        spikes = np.random.default_rng(0).random(24) < 0.3
        assert np.array_equal(np.asarray(f(jnp.asarray(spikes))), spikes)

    def test_all_gather_spikes_names_the_block_size_it_needs(self):
        with pytest.raises(ValueError, match='multiple of 8'):
            distributed.all_gather_spikes(jnp.zeros(5, bool), 'p')

    def test_collective_errors_names_the_likely_cause_and_lets_other_errors_through(self):
        with pytest.raises(CollectiveError, match='another process most likely died') as info:
            with distributed.collective_errors():
                raise ValueError('UNKNOWN: Gloo AllGather failed: Connection reset by peer')
        assert isinstance(info.value, RuntimeError) and isinstance(info.value.__cause__, ValueError)
        with pytest.raises(ValueError, match='failed to compile'):
            with distributed.collective_errors():
                raise ValueError('failed to compile')

    def test_check_same_config_passes_in_one_process(self):
        distributed.check_same_config({'seed': 0, 'backend': 'numba'})


class TestSpawn:
    def test_a_process_past_the_deadline_is_killed_and_reported(self):
        start = time.monotonic()
        results = distributed.spawn([[sys.executable, '-c', 'import time; time.sleep(120)']], timeout=2)
        assert time.monotonic() - start < 30
        assert results[0].returncode is None


class TestAcrossProcesses:
    def test_two_processes_give_the_spike_trains_of_one(self):
        results = distributed.spawn([[sys.executable, EXAMPLE, '--check', *SMALL]] * 2, timeout=240, env=ENV)
        assert all(r.returncode == 0 for r in results), describe(results)
        assert 'on 2 process(es)' in results[0].output, describe(results)
        assert 'identical to the one-process run: True' in results[0].output, describe(results)
        # A silent network (no spike anywhere) would be identical too: the raster must have spikes.
        rate = re.search(r'rate ([0-9.]+) Hz', results[0].output)
        assert rate and float(rate.group(1)) > 0, describe(results)

    def test_different_seeds_and_backends_stop_every_process_at_start(self):
        commands = [[sys.executable, EXAMPLE, *SMALL, '--seed', '0', '--backend', 'numba'],
                    [sys.executable, EXAMPLE, *SMALL, '--seed', '1', '--backend', 'jax']]
        results = distributed.spawn(commands, timeout=240, env=ENV)
        for r in results:
            assert r.returncode == 2, describe(results)
            assert ConfigMismatchError.__name__ in r.output, describe(results)
            assert "seed: process 0 has 0, process 1 has 1" in r.output, describe(results)
            assert "backend: process 0 has 'numba', process 1 has 'jax'" in r.output, describe(results)
            assert 'identical' not in r.output

    def test_an_unreachable_coordinator_is_an_error_within_the_timeout(self):
        env = dict(ENV, JAX_COORDINATOR_ADDRESS=f'127.0.0.1:{distributed.free_port()}',
                   EVENTJAX_NUM_PROCESSES='2', EVENTJAX_PROCESS_ID='1')
        start = time.monotonic()
        proc = subprocess.run([sys.executable, EXAMPLE, *SMALL[:4], '--init-timeout', '3'], env=env,
                              capture_output=True, text=True, timeout=120)
        assert time.monotonic() - start < 100
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert 'CoordinatorUnreachableError' in proc.stderr and 'did not answer within 3 s' in proc.stderr

    def test_cluster_mode_outside_a_job_says_how_to_start_one(self):
        env = {k: v for k, v in ENV.items()
               if not k.startswith(('SLURM_', 'OMPI_', 'PMI_', 'EVENTJAX_', 'JAX_COORDINATOR'))}
        proc = subprocess.run([sys.executable, EXAMPLE, '--cluster', *SMALL], env=env, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode != 0
        assert 'no multi-process job found' in proc.stderr and 'EVENTJAX_PROCESS_ID' in proc.stderr, proc.stderr

    def test_a_process_that_dies_ends_the_others_with_an_error(self, tmp_path):
        script = tmp_path / 'dies.py'
        script.write_text(textwrap.dedent('''
            import os, sys
            import numpy as np
            import jax
            from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
            from eventjax import distributed
            rank, size = distributed.initialize(init_timeout=60, heartbeat_timeout=5, shutdown_timeout=10)
            mesh = Mesh(np.array(jax.devices()), ('p',))
            gather = jax.jit(jax.shard_map(lambda s: distributed.all_gather_spikes(s, 'p'), mesh=mesh,
                                           in_specs=P('p'), out_specs=P('p')))
            s = jax.make_array_from_process_local_data(NamedSharding(mesh, P('p')), np.ones(8, bool), (8 * size,))
            for step in range(1000):
                if rank == 1 and step == 5:
                    os._exit(7)
                with distributed.collective_errors():
                    gather(s).block_until_ready()
            print('all steps done')
        '''))
        start = time.monotonic()
        results = distributed.spawn([[sys.executable, str(script)]] * 2, timeout=150, grace=60, env=ENV)
        assert time.monotonic() - start < 140, describe(results)
        assert results[1].returncode == 7, describe(results)
        assert results[0].returncode not in (0, None), describe(results)
        assert 'all steps done' not in results[0].output
        assert 'CollectiveError' in results[0].output or 'another task died' in results[0].output, describe(results)
