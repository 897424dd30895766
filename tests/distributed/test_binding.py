"""Each process of an MPI job on one machine bound to its share of the cores, where the launcher bound nothing.

Each case runs in a process of its own: a binding, once set, holds for the rest of the process.
"""

import json
import os
import subprocess
import sys

import pytest

CPUS = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else 0

pytestmark = pytest.mark.skipif(CPUS != (os.cpu_count() or 0) or CPUS < 2,
                                reason='needs Linux with 2 or more cores, none of them masked off')


def bind(local_rank, local_size, env=None):
    """``_bind_share`` in a fresh process; returns (exit code, [its cores, every thread's, NUMBA_NUM_THREADS] or
    its output where it failed)."""
    code = ('import json, os, threading, time\n'
            'from eventjax.distributed import job\n'
            'threading.Thread(target=time.sleep, args=(2,), daemon=True).start()\n'
            f'job._bind_share({local_rank}, {local_size}, "who")\n'
            'tasks = os.listdir("/proc/self/task")\n'
            'print(json.dumps([sorted(os.sched_getaffinity(0)), sorted({tuple(sorted(os.sched_getaffinity(int(t)))) '
            'for t in tasks}), os.environ.get("NUMBA_NUM_THREADS")]))')
    environ = {k: v for k, v in os.environ.items() if k not in ('NUMBA_NUM_THREADS', 'EVENTJAX_BIND')}
    proc = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, timeout=120,
                          env={**environ, **(env or {})})
    return proc.returncode, json.loads(proc.stdout) if proc.returncode == 0 else proc.stdout + proc.stderr


def test_each_local_process_gets_its_share_of_the_cores_on_every_thread():
    per = CPUS // 2
    for rank in (0, 1):
        code, out = bind(rank, 2)
        share = list(range(rank * per, (rank + 1) * per))
        # this thread, every thread (the one started before too), numba's thread count
        assert code == 0 and out == [share, [share], str(per)], out


def test_no_binding_when_asked_or_when_the_processes_or_numba_s_threads_outnumber_the_cores():
    everything = list(range(CPUS))
    cases = (({'EVENTJAX_BIND': 'none'}, 2), ({}, CPUS + 1), ({}, 1), ({'NUMBA_NUM_THREADS': str(CPUS)}, 2))
    for env, size in cases:
        code, out = bind(0, size, env)
        assert code == 0 and out == [everything, [everything], env.get('NUMBA_NUM_THREADS')], out


def test_a_bad_binding_mode_is_named():
    code, out = bind(0, 2, {'EVENTJAX_BIND': 'core'})
    assert code != 0 and "EVENTJAX_BIND must be 'auto' or 'none', got 'core'" in out, out
