"""The network on JAX's multi-process runtime: real processes on localhost, gloo collectives.

Every process these tests start runs under ``distributed.spawn`` or
``subprocess.run`` with a deadline, so a hang becomes a failure and nothing
outlives the test.
"""

import contextlib
import importlib.util
import math
import os
import pathlib
import re
import signal
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

import eventjax as ej
from eventjax import distributed
from eventjax.errors import CollectiveError, ConfigMismatchError, CoordinatorUnreachableError

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

    def test_gathered_spike_words_feed_the_packed_product(self):
        mesh = Mesh(np.array(jax.devices()[:1]), ('p',))
        f = jax.shard_map(lambda s: distributed.all_gather_spike_words(s, 'p'), mesh=mesh, in_specs=P('p'),
                          out_specs=P('p'))
        spikes = np.random.default_rng(1).random(64) < 0.3
        words = f(jnp.asarray(spikes))
        assert words.dtype == jnp.uint32 and np.array_equal(np.asarray(words), np.asarray(ej.bitpack(spikes)))
        A = ej.CSR.fromdense(np.eye(64, dtype=np.float32) * 2)
        y = ej.binary_csrmv_packed(A.data, A.indices, A.indptr, words, shape=(64, 64), transpose=True,
                                   backend='jax')
        np.testing.assert_allclose(y, 2.0 * spikes)
        with pytest.raises(ValueError, match='multiple of 32'):
            distributed.all_gather_spike_words(jnp.zeros(40, bool), 'p')

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

    def test_check_same_config_with_a_nan_passes_in_one_process(self):
        distributed.check_same_config({'rate': math.nan, 'nested': [math.nan, 1.0], 'seed': 0})

    def test_check_job_passes_in_one_process_with_one_device(self):
        assert jax.local_device_count() == 1
        distributed.check_job({'seed': 0})

    def test_a_process_is_a_member_when_a_launcher_numbered_it_or_it_runs_on_a_cluster(self, monkeypatch):
        monkeypatch.delenv(distributed.ENV_PROCESS_ID, raising=False)
        assert not distributed.is_member()
        assert distributed.is_member(cluster=True)
        monkeypatch.setenv(distributed.ENV_PROCESS_ID, '1')
        assert distributed.is_member()

    def test_a_member_whose_job_cannot_run_exits_2_with_one_line_naming_the_error(self, capsys):
        def member(port):
            raise CoordinatorUnreachableError(f'nothing listens at 127.0.0.1:{port}')

        assert distributed.run_member(member, 9) == 2
        assert capsys.readouterr().err == 'error: CoordinatorUnreachableError: nothing listens at 127.0.0.1:9\n'
        assert distributed.run_member(lambda: 0) == 0
        with pytest.raises(ValueError, match='other errors pass'):
            distributed.run_member(lambda: (_ for _ in ()).throw(ValueError('other errors pass')))


class TestInitializeArguments:
    """Bad arguments to initialize() are named before anything waits for a coordinator."""

    def test_a_process_id_out_of_range_is_named(self):
        address = f'127.0.0.1:{distributed.free_port()}'
        with pytest.raises(ValueError, match=r'process_id=5 is out of range.*< num_processes=2'):
            distributed.initialize(address, num_processes=2, process_id=5, init_timeout=1, quiet=True)

    def test_a_negative_process_id_and_zero_processes_are_named(self):
        address = f'127.0.0.1:{distributed.free_port()}'
        with pytest.raises(ValueError, match='process_id=-1'):
            distributed.initialize(address, num_processes=2, process_id=-1, init_timeout=1, quiet=True)
        with pytest.raises(ValueError, match='num_processes must be >= 1'):
            distributed.initialize(address, num_processes=0, process_id=0, init_timeout=1, quiet=True)

    @pytest.mark.parametrize('name', ['init_timeout', 'heartbeat_timeout', 'shutdown_timeout'])
    def test_a_timeout_below_one_second_is_named(self, name):
        address = f'127.0.0.1:{distributed.free_port()}'
        with pytest.raises(ValueError, match=f'{name} must be a whole number of seconds >= 1'):
            distributed.initialize(address, num_processes=2, process_id=1, quiet=True,
                                   **{'init_timeout': 1, name: 0})


# The launcher inherits the test runner's signal dispositions and mask, and an ignored SIGHUP (nohup,
# a CI runner, a session started in the background) stays ignored by spawn on purpose: the test sets
# the default action for both signals it sends, and unblocks them, so it checks spawn's handling
# wherever it runs.
LAUNCHER = textwrap.dedent('''
    import os, signal, sys
    for signum in (signal.SIGHUP, signal.SIGTERM):
        signal.signal(signum, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGHUP, signal.SIGTERM})
    from eventjax import distributed
    code = ("import os, pathlib, time; d = pathlib.Path(os.environ['PID_DIR']); "
            "(d / (os.environ['EVENTJAX_PROCESS_ID'] + '.tmp')).write_text(str(os.getpid())); "
            "(d / (os.environ['EVENTJAX_PROCESS_ID'] + '.tmp')).rename(d / os.environ['EVENTJAX_PROCESS_ID']); "
            "time.sleep(120)")
    distributed.spawn([[sys.executable, '-c', code]] * 2, timeout=300)
    print('spawn returned')
''')


def _alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


class TestSpawn:
    def test_a_process_past_the_deadline_is_killed_and_reported(self):
        start = time.monotonic()
        results = distributed.spawn([[sys.executable, '-c', 'import time; time.sleep(120)']], timeout=1)
        assert time.monotonic() - start < 30
        assert results[0].returncode is None

    def test_a_failing_process_after_a_running_one_is_noticed(self):
        start = time.monotonic()
        results = distributed.spawn([[sys.executable, '-c', 'import time; time.sleep(120)'],
                                     [sys.executable, '-c', 'raise SystemExit(3)']], timeout=150, grace=1)
        assert time.monotonic() - start < 60, describe(results)
        assert results[1].returncode == 3, describe(results)
        assert results[0].returncode is None, describe(results)

    def test_launch_prints_process_0_and_the_end_of_a_failed_one(self, capsys):
        code = 'import os, sys; i = os.environ["EVENTJAX_PROCESS_ID"]; print("hello from", i); sys.exit(int(i) * 5)'
        assert distributed.launch([sys.executable, '-c', code], 2, timeout=60, grace=5) == 1
        out = capsys.readouterr().out
        assert '--- process 0 (exit code 0) ---\nhello from 0' in out
        assert '--- process 1 (exit code 5) ---\nhello from 1' in out

    def test_launch_returns_0_when_every_process_succeeds(self, capsys):
        assert distributed.launch([sys.executable, '-c', 'print("ok")'], 2, timeout=60) == 0
        assert capsys.readouterr().out.count('ok') == 1  # process 0's output alone

    @pytest.mark.parametrize('timeout, grace', [(-1, 1), (math.inf, 1), (10, math.nan)])
    def test_bad_timeouts_are_refused(self, timeout, grace):
        with pytest.raises(ValueError, match='spawn'):
            distributed.spawn([[sys.executable, '-c', 'pass']], timeout=timeout, grace=grace)

    @pytest.mark.parametrize('signum', [signal.SIGTERM, signal.SIGHUP], ids=['SIGTERM', 'SIGHUP'])
    def test_a_signal_to_the_launcher_ends_its_processes(self, tmp_path, signum):
        env = dict(ENV, PID_DIR=str(tmp_path))
        launcher = subprocess.Popen([sys.executable, '-c', LAUNCHER], env=env, start_new_session=True,
                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        pids = []
        try:
            deadline = time.monotonic() + 120
            while len(pids) < 2:
                assert launcher.poll() is None, launcher.communicate()[0]
                assert time.monotonic() < deadline, 'the processes did not start'
                time.sleep(0.1)
                pids = [int((tmp_path / str(i)).read_text()) for i in range(2) if (tmp_path / str(i)).exists()]
            launcher.send_signal(signum)
            out = launcher.communicate(timeout=60)[0]
            assert launcher.returncode == -signum, out
            assert 'spawn returned' not in out
            deadline = time.monotonic() + 20
            while any(_alive(p) for p in pids) and time.monotonic() < deadline:
                time.sleep(0.1)
            assert not any(_alive(p) for p in pids), f'processes {pids} outlived their launcher'
        finally:
            for pid in [*pids, launcher.pid]:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(pid, signal.SIGKILL)
            with contextlib.suppress(subprocess.TimeoutExpired):
                launcher.communicate(timeout=30)


def _example():
    spec = importlib.util.spec_from_file_location('cuba_distributed_example', EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


class TestExampleArguments:
    """cuba_distributed.py names a bad size or count and exits with code 2 before starting anything."""

    @pytest.mark.parametrize('argv, says', [
        (['--neurons', '0'], '--neurons must be at least 80'),
        (['--neurons', '-5'], '--neurons must be at least 80'),
        (['--neurons', '50'], '--neurons must be at least 80'),
        (['--conn', 'fcn', '--neurons', '79'], '--neurons must be at least 80'),
        (['--duration', '0'], '--duration must be at least one step'),
        (['--duration', 'nan'], '--duration must be at least one step'),
        (['--processes', '0'], '--processes must be at least 1'),
        (['--processes', '-1'], '--processes must be at least 1'),
        (['--processes', '2', '--init-timeout', '0'], '--init-timeout must be at least 1'),
        (['--heartbeat-timeout', '0'], '--heartbeat-timeout must be at least 1'),
        (['--timeout', '0'], '--timeout must be a positive number'),
    ])
    def test_a_bad_size_is_named_with_exit_code_2(self, argv, says, capsys):
        with pytest.raises(SystemExit) as info:
            _example().parse(argv)
        assert info.value.code == 2
        assert says in capsys.readouterr().err

    def test_the_smallest_networks_are_accepted(self):
        example = _example()
        for conn in ('csr', 'fcn'):
            example.parse(['--conn', conn, '--neurons', '80', '--duration', '0.1'])
            blocks = example.local_block(0, 80, conn, range(80), 80)
            assert len(blocks) == 2

    def test_the_script_exits_with_code_2_and_a_message(self):
        proc = subprocess.run([sys.executable, EXAMPLE, '--neurons', '0'], env=ENV, capture_output=True,
                              text=True, timeout=120)
        assert proc.returncode == 2, proc.stderr
        assert 'error: --neurons must be at least 80' in proc.stderr
        assert 'Traceback' not in proc.stderr


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
        proc = subprocess.run([sys.executable, EXAMPLE, *SMALL[:4], '--init-timeout', '1'], env=env,
                              capture_output=True, text=True, timeout=120)
        assert time.monotonic() - start < 100
        assert proc.returncode == 2, proc.stdout + proc.stderr
        assert 'CoordinatorUnreachableError' in proc.stderr and 'did not answer within 1 s' in proc.stderr

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


class TestJob:
    """One step code for every transport: outside a job it runs on a one-device mesh."""

    def test_the_step_code_of_a_job_gathers_the_spikes_in_one_process(self):
        job = distributed.current()
        assert (job.transport, job.index, job.count) == ('local', 0, 1)
        spikes = np.random.default_rng(2).random(64) < 0.3
        def step(s):
            index = job.axis_index() + jnp.zeros(1, jnp.int32)
            return distributed.all_gather_spike_words(s, job), distributed.all_gather_spikes(s, job), index

        f = jax.jit(job.program(step, in_specs=job.spec, out_specs=job.spec))
        words, again, index = f(job.put(spikes))
        assert np.array_equal(np.asarray(words), np.asarray(ej.bitpack(spikes)))
        assert np.array_equal(np.asarray(again), spikes) and int(index[0]) == 0
        assert job.allgather_host(np.arange(3)).tolist() == [[0, 1, 2]]

    def test_an_unknown_transport_is_named(self):
        with pytest.raises(ValueError, match="transport must be 'auto', 'mpi' or 'gloo'"):
            distributed.initialize(transport='tcp', quiet=True)

    def test_a_process_an_mpi_launcher_started_is_a_member(self, monkeypatch):
        for name in (distributed.ENV_PROCESS_ID, *distributed.job.MPI_LAUNCHER_VARIABLES):
            monkeypatch.delenv(name, raising=False)
        assert not distributed.mpi_launched() and not distributed.is_member()
        monkeypatch.setenv('PMI_SIZE', '2')
        assert distributed.mpi_launched() and distributed.is_member()
