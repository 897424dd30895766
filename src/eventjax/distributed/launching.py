"""Starting a job's processes on this machine, and ending them: every process ends by a deadline."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from typing import NamedTuple

from eventjax.distributed.job import ENV_COORDINATOR, ENV_NUM_PROCESSES, ENV_PROCESS_ID, mpi_launched
from eventjax.errors import CollectiveError, ConfigMismatchError, CoordinatorUnreachableError


def free_port() -> int:
    """A TCP port on 127.0.0.1 that is free now (the OS picks it).

    Example:
        >>> from eventjax import distributed
        >>> 0 < distributed.free_port() < 65536
        True
    """
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(('127.0.0.1', 0))
        return s.getsockname()[1]


class ProcessResult(NamedTuple):
    """How one process of :func:`spawn` ended: its exit code (``None`` if it was killed at the deadline) and output."""

    process_id: int
    returncode: int | None
    output: str


class _EndOnSignal:
    """SIGTERM and SIGHUP to this process first kill the job's processes, then act as they would have.

    The processes run in sessions of their own (so a terminal's Ctrl-C or hang-up
    reaches only the launcher, which stops them in order); without this, a
    launcher ended by ``kill`` or ``timeout`` would leave them running, re-parented
    to PID 1. The handler only kills and records; the launcher's loop sees its
    processes gone, cleans up, and on leaving the signal is sent again under the
    handler that was there before. Handlers can only be set in the main thread;
    elsewhere nothing changes.
    """

    NAMES = ('SIGTERM', 'SIGHUP')

    def __init__(self, procs: list) -> None:
        self.procs = procs
        self.signum: int | None = None
        self._old: dict = {}

    def _handler(self, signum, frame) -> None:
        self.signum = self.signum or signum
        for p in self.procs:
            if p.returncode is None:  # no poll() here: the interrupted code may hold Popen's lock
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(p.pid, signal.SIGKILL)

    def __enter__(self) -> _EndOnSignal:
        if threading.current_thread() is threading.main_thread():
            for name in self.NAMES:
                # A signal the caller ignores (SIGHUP under nohup) stays ignored.
                if hasattr(signal, name) and signal.getsignal(getattr(signal, name)) is not signal.SIG_IGN:
                    self._old[name] = signal.signal(getattr(signal, name), self._handler)
        return self

    def __exit__(self, *exc) -> bool:
        for name, old in self._old.items():
            signal.signal(getattr(signal, name), old)
        if self.signum is not None:
            os.kill(os.getpid(), self.signum)  # the default action ends this process here
        return False


def _stop(procs) -> None:
    """Kill every process group still running and reap it."""
    for p in procs:
        if p.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(p.pid, signal.SIGKILL)
    for p in procs:
        with contextlib.suppress(subprocess.TimeoutExpired):
            p.wait(30)


def spawn(commands: Sequence[Sequence[str]], *, timeout: float = 600.0, grace: float = 30.0,
          env: Mapping[str, str] | None = None, cwd: str | None = None) -> list[ProcessResult]:
    """Run one command per process on localhost as one JAX job; every process ends by ``timeout``.

    Process ``i`` runs ``commands[i]`` with ``JAX_COORDINATOR_ADDRESS`` (a free
    port on 127.0.0.1), ``EVENTJAX_NUM_PROCESSES`` and ``EVENTJAX_PROCESS_ID``
    set, in a process group of its own. Once any process fails, the others get
    ``grace`` seconds to end with their own error, then are killed, as is
    anything still running at ``timeout``, when the caller is interrupted, or
    when the calling process gets SIGTERM or SIGHUP (called from the main thread).

    Example:
        >>> import sys
        >>> from eventjax import distributed
        >>> code = 'import os; print(os.environ["EVENTJAX_PROCESS_ID"])'
        >>> [r.output.strip() for r in distributed.spawn([[sys.executable, '-c', code]] * 2, timeout=60)]
        ['0', '1']
    """
    for name, value in (('timeout', timeout), ('grace', grace)):
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 <= value < float('inf'):
            raise ValueError(f'spawn(): {name} must be a finite number of seconds >= 0, got {value!r}.')
    base = dict(os.environ if env is None else env)
    base[ENV_COORDINATOR] = f'127.0.0.1:{free_port()}'
    base[ENV_NUM_PROCESSES] = str(len(commands))
    procs, logs, killed = [], [], set()
    with _EndOnSignal(procs) as signalled, tempfile.TemporaryDirectory(prefix='eventjax-spawn-') as tmp:
        try:
            for i, cmd in enumerate(commands):
                if signalled.signum:
                    break
                logs.append(open(os.path.join(tmp, f'{i}.log'), 'w+'))  # noqa: SIM115 - closed below
                procs.append(subprocess.Popen(list(cmd), stdout=logs[-1], stderr=subprocess.STDOUT, cwd=cwd,
                                              env={**base, ENV_PROCESS_ID: str(i)}, start_new_session=True))
            deadline, failed = time.monotonic() + timeout, False
            while not signalled.signum:
                codes = [p.poll() for p in procs]  # every process, each round: any one of them may fail first
                if all(c is not None for c in codes):
                    break
                now = time.monotonic()
                if not failed and any(c not in (None, 0) for c in codes):
                    deadline, failed = min(deadline, now + grace), True
                if now >= deadline:
                    killed |= {i for i, c in enumerate(codes) if c is None}
                    break
                time.sleep(0.1)
        finally:
            _stop(procs)
            outputs = []
            for log in logs:
                log.seek(0)
                outputs.append(log.read())
                log.close()
    return [ProcessResult(i, None if i in killed else p.returncode, out)
            for i, (p, out) in enumerate(zip(procs, outputs))]


def launch(command: Sequence[str], processes: int, *, timeout: float = 600.0, grace: float = 30.0,
           env: Mapping[str, str] | None = None, cwd: str | None = None, stream=None) -> int:
    """Run ``processes`` copies of ``command`` as one job (:func:`spawn`); print process 0's output and the end of
    any failed process's; return 0 if every process ended with 0, else 1.

    ``stream``: where to print (default ``sys.stdout``). The other arguments are :func:`spawn`'s.

    Example:
        >>> import sys
        >>> from eventjax import distributed
        >>> code = 'import os; print("process", os.environ["EVENTJAX_PROCESS_ID"])'
        >>> distributed.launch([sys.executable, '-c', code], 2, timeout=60)
        --- process 0 (exit code 0) ---
        process 0
        0
    """
    stream = sys.stdout if stream is None else stream
    results = spawn([list(command)] * processes, timeout=timeout, grace=grace, env=env, cwd=cwd)
    for r in results:
        if r.process_id == 0 or r.returncode != 0:
            code = r.returncode
            ended = ('killed at the deadline' if code is None else
                     f'ended by {signal.Signals(-code).name}' if code < 0 else f'exit code {code}')
            tail = r.output if r.returncode == 0 else '\n'.join(r.output.splitlines()[-25:])
            print(f'--- process {r.process_id} ({ended}) ---\n{tail.rstrip()}', file=stream, flush=True)
    return 0 if all(r.returncode == 0 for r in results) else 1


def is_member(cluster: bool = False) -> bool:
    """Whether this process is one member of a job, rather than the command a user ran to start one.

    A member was started by :func:`launch` or :func:`spawn` (which set
    ``EVENTJAX_PROCESS_ID``) or by an MPI launcher (``mpirun``, ``mpiexec``),
    or runs where a cluster manager places the processes (``cluster=True``,
    as with ``--cluster``).

    Example:
        >>> from eventjax import distributed
        >>> distributed.is_member(), distributed.is_member(cluster=True)  # run by hand, outside a job
        (False, True)
    """
    return cluster or os.environ.get(ENV_PROCESS_ID) is not None or mpi_launched()


def run_member(member: Callable[..., int], *args) -> int:
    """``member(*args)``, a member's part of a job; the errors of a job that cannot run (configurations that
    differ, a coordinator out of reach, a failed exchange) become one line on stderr and exit code 2.

    Example:
        >>> from eventjax import distributed
        >>> from eventjax.errors import CoordinatorUnreachableError
        >>> def member():
        ...     raise CoordinatorUnreachableError('nothing listens at 127.0.0.1:1')
        >>> distributed.run_member(member)
        2
    """
    try:
        return member(*args)
    except (ConfigMismatchError, CoordinatorUnreachableError, CollectiveError) as err:
        print(f'error: {type(err).__name__}: {err}', file=sys.stderr, flush=True)
        return 2
