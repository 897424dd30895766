"""Each process of an MPI job on one machine bound to its share of the cores, where the launcher bound nothing.

The cases run in fresh processes, those that bind last: a binding, once set, holds for the rest of the process.
"""

import json
import os
import subprocess
import sys

import pytest

CPUS = len(os.sched_getaffinity(0)) if hasattr(os, 'sched_getaffinity') else 0

pytestmark = pytest.mark.skipif(CPUS != (os.cpu_count() or 0) or CPUS < 2,
                                reason='needs Linux with 2 or more cores, none of them masked off')

SCRIPT = '''
import json, os, sys, threading, time
from eventjax.distributed import job
threading.Thread(target=time.sleep, args=(5,), daemon=True).start()  # a thread started before the binding
out = []
for rank, size, env in json.loads(sys.argv[1]):
    os.environ.pop('NUMBA_NUM_THREADS', None)
    os.environ.pop('EVENTJAX_BIND', None)
    os.environ.update(env)
    try:
        job._bind_share(rank, size, 'who')
    except ValueError as err:
        out.append(str(err))
        continue
    threads = {tuple(sorted(os.sched_getaffinity(int(t)))) for t in os.listdir('/proc/self/task')}
    out.append([sorted(os.sched_getaffinity(0)), sorted(threads), os.environ.get('NUMBA_NUM_THREADS')])
print(json.dumps(out))
'''


def bind(*cases):
    """``_bind_share(rank, size)`` under the variables ``env`` for each ``(rank, size, env)`` in turn, in one fresh
    process; for each, [its cores, every thread's cores, NUMBA_NUM_THREADS] or the error's text."""
    environ = {k: v for k, v in os.environ.items() if k not in ('NUMBA_NUM_THREADS', 'EVENTJAX_BIND')}
    proc = subprocess.run([sys.executable, '-c', SCRIPT, json.dumps(cases)], capture_output=True, text=True,
                          timeout=120, env=environ)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return json.loads(proc.stdout)


def test_each_local_process_gets_its_share_of_the_cores_on_every_thread_unless_it_should_not():
    per, everything = CPUS // 2, list(range(CPUS))
    unbound = [(0, 2, {'EVENTJAX_BIND': 'none'}), (0, CPUS + 1, {}), (0, 1, {}),
               (0, 2, {'NUMBA_NUM_THREADS': str(CPUS)})]  # asked, more processes or threads than cores, alone
    *kept, bad, last = bind(*unbound, (0, 2, {'EVENTJAX_BIND': 'core'}), (1, 2, {}))
    for (_, _, env), got in zip(unbound, kept):
        assert got == [everything, [everything], env.get('NUMBA_NUM_THREADS')], (env, got)
    assert "EVENTJAX_BIND must be 'auto' or 'none', got 'core'" in bad
    # this thread, every thread (the one started before too), numba's thread count: the share's
    share = list(range(per, 2 * per))
    assert last == [share, [share], str(per)]
    assert bind((0, 2, {})) == [[list(range(per)), [list(range(per))], str(per)]]
