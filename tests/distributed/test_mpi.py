"""Spikes across processes by MPI: PD14 and CUBA under ``mpirun`` on localhost give the one-process run's spikes.

Needs the ``mpi`` extra (``make mpi``); without it every test here skips, naming it. Each ``mpirun`` runs in a
session of its own with a deadline, and its whole process group is killed before the test returns.
"""

import importlib.util
import os
import pathlib
import shutil
import signal
import subprocess
import sys

import pytest

from eventjax import distributed

ROOT = pathlib.Path(__file__).resolve().parent.parent.parent
MPIRUN = shutil.which('mpirun', path=os.pathsep.join([os.path.dirname(sys.executable), os.environ.get('PATH', '')]))
MISSING = [m for m in ('mpi4py', 'mpi4jax') if importlib.util.find_spec(m) is None] + ([] if MPIRUN else ['mpirun'])

pytestmark = [pytest.mark.long, pytest.mark.skipif(
    bool(MISSING), reason=f'needs the mpi extra ({", ".join(MISSING)} missing): make mpi, or see docs/distributed.rst')]


def mpirun(processes, argv, timeout=400):
    """``mpirun -n processes python argv`` from the repository root; returns (exit code, output)."""
    env = {'PATH': os.pathsep.join([os.path.dirname(sys.executable), os.environ.get('PATH', '/usr/bin:/bin')]),
           'HOME': os.environ.get('HOME', '/tmp'), 'NUMBA_NUM_THREADS': '1', 'JAX_PLATFORMS': 'cpu',
           'PYTHONPATH': os.pathsep.join([str(ROOT), str(ROOT / 'src')])}
    proc = subprocess.Popen([MPIRUN, '-n', str(processes), sys.executable, *argv], cwd=ROOT, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        out = 'killed at the deadline'
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(30)
    return proc.returncode, out


@pytest.mark.parametrize('processes', [2, 4])
def test_pd14_under_mpirun_gives_the_one_process_spikes(tmp_path, processes):
    from examples.microcircuit import distributed as mc

    argv = ['--scale', '0.02', '--k-scale', '0.02', '--t-sim', '60', '--t-presim', '20', '--drive', 'poisson',
            '--delay-min', '2', '--spikes-dir', str(tmp_path)]
    code, out = mpirun(processes, ['-m', 'examples.microcircuit.distributed', *argv])
    assert code == 0, out[-4000:]
    assert f'PD14 on {processes} process(es) (mpi)' in out and 'an exchange every 2' in out, out[-4000:]
    got = mc.job_spikes(str(tmp_path), processes)
    want = mc.one_process_spikes(mc.parse(argv))
    assert want[0].size > 50
    assert mc.same_spikes(got, want)


def test_cuba_under_mpirun_gives_the_one_process_raster():
    code, out = mpirun(2, [str(ROOT / 'docs' / 'examples' / 'cuba_distributed.py'), '--neurons', '1003',
                           '--duration', '30', '--check'])
    assert code == 0, out[-4000:]
    assert 'CUBA on 2 process(es) (mpi)' in out and 'identical to the one-process run: True' in out, out[-4000:]


def test_transport_mpi_outside_mpirun_joins_a_job_of_one(tmp_path):
    code = ('from eventjax import distributed as d; print(d.initialize(transport="mpi", quiet=True), '
            'd.current().transport)')
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120,
                          env={k: v for k, v in os.environ.items() if k not in distributed.job.MPI_LAUNCHER_VARIABLES})
    assert proc.returncode == 0 and '(0, 1) mpi' in proc.stdout, proc.stdout + proc.stderr


@pytest.mark.skipif(len(os.sched_getaffinity(0)) < 2 or len(os.sched_getaffinity(0)) != os.cpu_count(),
                    reason='needs 2 or more cores, none of them masked off')
def test_mpirun_processes_are_bound_to_distinct_cores():
    code = ('import os; from eventjax import distributed as d; d.initialize(); '
            'print("cores", d.current().index, sorted(os.sched_getaffinity(0)))')
    status, out = mpirun(2, ['-c', code], timeout=120)
    assert status == 0, out
    cores = dict(line.split(' ', 2)[1:] for line in out.splitlines() if line.startswith('cores '))
    per = os.cpu_count() // 2
    assert cores == {'0': str(list(range(per))), '1': str(list(range(per, 2 * per)))}, out


def test_the_exchange_benchmark_times_each_transport(capsys):
    from examples.microcircuit import bench_exchange

    assert bench_exchange.main(['--words', '8', '--steps', '20', '--repeat', '2', '--modes', 'mpi4py', 'mpi4jax',
                                'mpi4jax+pack', 'gloo', '--timeout', '300']) == 0
    lines = capsys.readouterr().out.splitlines()
    for mode in ('mpi4py', 'mpi4jax', 'mpi4jax+pack', 'gloo'):
        line = next(x for x in lines if x.split()[0] == mode)
        assert 'median' in line and '(64 bytes gathered)' in line, lines
