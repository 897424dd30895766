"""Running one network over several processes, on JAX's own multi-process runtime.

Thin helpers around :func:`jax.distributed.initialize`, global meshes and
``shard_map`` collectives; JAX moves the data (gloo between CPU processes,
NCCL between GPUs), nothing here is a transport. :func:`initialize` joins the
job with bounded timeouts, :func:`check_same_config` stops a job whose
processes disagree, :func:`own_rows` and :func:`all_gather_spikes` split the
neurons and exchange their spikes, :func:`spawn` starts a job on localhost.

A process learns its place from the arguments of :func:`initialize`, else
from ``JAX_COORDINATOR_ADDRESS`` (JAX's own variable), ``EVENTJAX_NUM_PROCESSES``
and ``EVENTJAX_PROCESS_ID``, else from JAX's cluster auto-detection (Slurm,
Open MPI, mpi4py, Kubernetes).
"""

from __future__ import annotations

import contextlib
import json
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

import jax
import jax.numpy as jnp
import numpy as np

from eventjax.errors import CollectiveError, ConfigMismatchError, CoordinatorUnreachableError
from eventjax.kernels.indexed import bitpack

__all__ = ['ProcessResult', 'all_gather_spike_words', 'all_gather_spikes', 'block_size', 'check_job',
           'check_same_config', 'collective_errors', 'free_port', 'initialize', 'is_member', 'launch', 'own_rows',
           'run_member', 'spawn']

ENV_NUM_PROCESSES = 'EVENTJAX_NUM_PROCESSES'
ENV_PROCESS_ID = 'EVENTJAX_PROCESS_ID'
ENV_COORDINATOR = 'JAX_COORDINATOR_ADDRESS'


def _env_int(name):
    value = os.environ.get(name)
    if value is None or value == '':
        return None
    try:
        return int(value)
    except ValueError:
        raise ValueError(f'eventjax.distributed: {name} must be an integer, got {value!r}.') from None


def _check_place(num_processes, process_id):
    """A process id outside ``[0, num_processes)`` is an argument error, not a coordinator that never answers."""
    if num_processes is not None and num_processes < 1:
        raise ValueError(f'initialize(): num_processes must be >= 1, got {num_processes} '
                         f'(argument or {ENV_NUM_PROCESSES}).')
    if process_id is not None and (process_id < 0 or (num_processes is not None and process_id >= num_processes)):
        top = '' if num_processes is None else f' and < num_processes={num_processes}'
        raise ValueError(f'initialize(): process_id={process_id} is out of range; it must be >= 0{top} '
                         f'(argument or {ENV_PROCESS_ID}). Give each process a distinct id 0, 1, ...')


def _wait_for_coordinator(address, timeout, who):
    """Retry a TCP connection to ``address`` until it answers or ``timeout`` seconds pass."""
    host, _, port = address.rpartition(':')
    host = host.strip('[]')
    deadline = time.monotonic() + timeout
    while True:
        try:
            with socket.create_connection((host, int(port)), timeout=1.0):
                return
        except OSError as err:
            if time.monotonic() >= deadline:
                raise CoordinatorUnreachableError(
                    f'{who}: the coordinator at {address} did not answer within {timeout} s ({err}). '
                    f'Start process 0 first (it hosts the coordinator), check the address and port '
                    f'({ENV_COORDINATOR}), or raise init_timeout.') from None
            time.sleep(0.2)


def initialize(coordinator_address: str | None = None, num_processes: int | None = None,
               process_id: int | None = None, *, init_timeout: int = 60, heartbeat_timeout: int = 10,
               shutdown_timeout: int = 30, quiet: bool = False) -> tuple[int, int]:
    """Join a multi-process JAX job, with CPU collectives through gloo and bounded waits.

    Call it before any other JAX call. Every wait is bounded: a process that
    cannot reach the coordinator raises :class:`CoordinatorUnreachableError`
    after ``init_timeout`` seconds; process 0, whose peers do not all arrive in
    that time, is ended by JAX with ``DEADLINE_EXCEEDED``; once running, a
    process that stops answering for ``heartbeat_timeout`` seconds makes JAX end
    every other process with an error naming the lost task.

    Args:
        coordinator_address: ``host:port`` of process 0; default
            ``$JAX_COORDINATOR_ADDRESS``, else JAX's cluster auto-detection.
        num_processes: default ``$EVENTJAX_NUM_PROCESSES``, else auto-detected.
        process_id: default ``$EVENTJAX_PROCESS_ID``, else auto-detected.
        init_timeout: seconds to wait for the coordinator and all processes.
        heartbeat_timeout: seconds of silence after which a process counts as dead.
        shutdown_timeout: seconds a finishing process waits for the others.
        quiet: do not print the one line that says whom this process waits for.

    Returns:
        ``(process_index, process_count)``.

    Example:
        >>> # in each process of the job, before anything else touches JAX:
        >>> # rank, size = eventjax.distributed.initialize(init_timeout=30)
    """
    coordinator_address = coordinator_address or os.environ.get(ENV_COORDINATOR) or None
    num_processes = num_processes if num_processes is not None else _env_int(ENV_NUM_PROCESSES)
    process_id = process_id if process_id is not None else _env_int(ENV_PROCESS_ID)
    _check_place(num_processes, process_id)
    for name, value in (('init_timeout', init_timeout), ('heartbeat_timeout', heartbeat_timeout),
                        ('shutdown_timeout', shutdown_timeout)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise ValueError(f'initialize(): {name} must be a whole number of seconds >= 1, got {value!r}.')
    who = f'eventjax.distributed (process {"?" if process_id is None else process_id} of {num_processes or "?"})'
    jax.config.update('jax_cpu_collectives_implementation', 'gloo')
    if not quiet:
        print(f'{who}: joining the coordinator at {coordinator_address or "(auto-detected)"}; waits up to '
              f'{init_timeout} s for all processes, and ends if another process is silent for '
              f'{heartbeat_timeout} s.', file=sys.stderr, flush=True)
    if coordinator_address and process_id not in (None, 0):
        _wait_for_coordinator(coordinator_address, init_timeout, who)
    try:
        jax.distributed.initialize(coordinator_address, num_processes, process_id,
                                   initialization_timeout=init_timeout, heartbeat_timeout_seconds=heartbeat_timeout,
                                   shutdown_timeout_seconds=shutdown_timeout)
    except ValueError as err:
        if 'should be defined' not in str(err) and 'must be defined' not in str(err):
            raise
        raise ValueError(f'{who}: no multi-process job found ({err}). Start the processes under Slurm, Open MPI '
                         f'or mpi4py, or set {ENV_COORDINATOR}, {ENV_NUM_PROCESSES} and {ENV_PROCESS_ID} in '
                         f'each, or pass them to initialize().') from err
    return jax.process_index(), jax.process_count()


def check_same_config(config: Mapping[str, object], *, max_bytes: int = 4096) -> None:
    """Raise :class:`ConfigMismatchError` in every process unless all processes pass the same ``config``.

    The configuration is encoded as JSON and all-gathered over the processes
    (one collective, at start-up), so every process sees every other's values
    and the error names them.

    Args:
        config: JSON-able settings that must agree (seed, sizes, backend...).
        max_bytes: room for the encoded configuration.

    Example:
        >>> import eventjax as ej
        >>> from eventjax import distributed
        >>> distributed.check_same_config({'seed': 0, 'backend': ej.get_backend('cpu')})  # one process: passes
    """
    from jax.experimental import multihost_utils

    me, count = jax.process_index(), jax.process_count()
    payload = json.dumps(dict(config), sort_keys=True, default=str).encode()
    if len(payload) > max_bytes:
        raise ValueError(f'check_same_config(): the configuration takes {len(payload)} bytes as JSON, '
                         f'more than max_bytes={max_bytes}; raise max_bytes or pass fewer entries.')
    buf = np.zeros(max_bytes + 4, np.uint8)
    buf[:4] = np.frombuffer(np.uint32(len(payload)).tobytes(), np.uint8)
    buf[4:4 + len(payload)] = np.frombuffer(payload, np.uint8)
    gathered = np.asarray(multihost_utils.process_allgather(buf)).reshape(count, -1)
    configs = []
    for row in gathered:
        size = int(np.frombuffer(row[:4].tobytes(), np.uint32)[0])
        configs.append(json.loads(row[4:4 + size].tobytes().decode()))
    keys = sorted(set().union(*configs))
    # Compared as JSON text, so a NaN equals itself (as Python values, nan != nan).
    text = [{k: json.dumps(c.get(k, '<missing>'), sort_keys=True) for k in keys} for c in configs]
    differ = [k for k in keys if any(t[k] != text[0][k] for t in text)]
    if differ:
        lines = '; '.join(f'{k}: ' + ', '.join(f'process {i} has {c.get(k, "<missing>")!r}'
                                              for i, c in enumerate(configs)) for k in differ)
        raise ConfigMismatchError(f'process {me} of {count}: the processes were started with different '
                                  f'configurations ({lines}). Start every process with the same arguments, '
                                  f'and call set_backend with the same backend in each.')


def check_job(config: Mapping[str, object], who: str = 'eventjax.distributed') -> None:
    """Check, once every process has joined, that the job can run one network: the same ``config``, eventjax and
    JAX versions and local device count everywhere (:func:`check_same_config`), and one device per process.

    Args:
        config: JSON-able settings that must agree (seed, sizes, backend...).
        who: the program named in the error.

    Example:
        >>> from eventjax import distributed
        >>> distributed.check_job({'seed': 0})  # one process with one device: passes
    """
    from eventjax._version import __version__

    check_same_config({**config, 'eventjax': __version__, 'jax': jax.__version__,
                       'local_devices': jax.local_device_count()})
    if jax.local_device_count() != 1:
        raise ValueError(f'{who}: one device per process expected, this one has {jax.local_device_count()}; '
                         f'start one process per device (local_device_ids).')


def block_size(n: int, num_processes: int, multiple: int = 8) -> int:
    """Neurons per process: ``ceil(n / num_processes)`` rounded up to ``multiple`` (the last block is padded).

    Example:
        >>> from eventjax import distributed
        >>> distributed.block_size(1000, 3)
        336
    """
    per = -(-n // num_processes)
    return -(-per // multiple) * multiple


def own_rows(n: int, num_processes: int, process_id: int, multiple: int = 8) -> range:
    """The neurons process ``process_id`` owns: a contiguous block of :func:`block_size` (fewer in the last).

    Example:
        >>> from eventjax import distributed
        >>> distributed.own_rows(1000, 3, 2)
        range(672, 1000)
    """
    size = block_size(n, num_processes, multiple)
    return range(min(n, process_id * size), min(n, (process_id + 1) * size))


def all_gather_spikes(local: jax.Array, axis_name: str) -> jax.Array:
    """Inside ``shard_map``: every process's spike block, gathered into one bool vector.

    The spikes travel packed, one bit per neuron, so a step moves
    ``ceil(n / 8)`` bytes to each process whatever the firing rate.

    Args:
        local: this shard's spikes, bool of shape ``(b,)`` with ``b`` a multiple of 8.
        axis_name: the mesh axis the neurons are split over.

    Returns:
        Bool ``(b * axis_size,)``: shard ``i``'s spikes at ``[i * b, (i + 1) * b)``.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jax.sharding import Mesh, PartitionSpec as P
        >>> from eventjax import distributed
        >>> mesh = Mesh(jax.devices()[:1], ('p',))
        >>> f = jax.shard_map(lambda s: distributed.all_gather_spikes(s, 'p'), mesh=mesh,
        ...                   in_specs=P('p'), out_specs=P('p'))
        >>> f(jnp.arange(8) % 3 == 0).tolist()
        [True, False, False, True, False, False, True, False]
    """
    if local.shape[0] % 8:
        raise ValueError(f'all_gather_spikes(): the local block must hold a multiple of 8 neurons, got '
                         f'{local.shape[0]}; size blocks with block_size().')
    packed = jnp.packbits(local.astype(bool))
    return jnp.unpackbits(jax.lax.all_gather(packed, axis_name, tiled=True)).astype(bool)


def all_gather_spike_words(local: jax.Array, axis_name: str) -> jax.Array:
    """Inside ``shard_map``: every process's spikes gathered as packed words, for the packed products.

    The words are :func:`eventjax.bitpack`'s (bit ``b`` of word ``w`` is
    neuron ``32 w + b``), so :func:`eventjax.binary_csrmv_packed` and
    :func:`eventjax.binary_fcnmv_packed` multiply them without unpacking.
    Each step moves ``n / 8`` bytes, as :func:`all_gather_spikes` does.

    Args:
        local: this shard's spikes, bool of shape ``(b,)`` with ``b`` a multiple of 32.
        axis_name: the mesh axis the neurons are split over.

    Returns:
        uint32 ``(b * axis_size / 32,)``: the packed spikes of every shard, in shard order.

    Example:
        >>> import jax, jax.numpy as jnp
        >>> from jax.sharding import Mesh, PartitionSpec as P
        >>> from eventjax import distributed
        >>> mesh = Mesh(jax.devices()[:1], ('p',))
        >>> f = jax.shard_map(lambda s: distributed.all_gather_spike_words(s, 'p'), mesh=mesh,
        ...                   in_specs=P('p'), out_specs=P('p'))
        >>> f(jnp.arange(32) < 2).tolist()
        [3]
    """
    if local.shape[0] % 32:
        raise ValueError(f'all_gather_spike_words(): the local block must hold a multiple of 32 neurons, got '
                         f'{local.shape[0]}; size blocks with block_size(n, processes, multiple=32).')
    return jax.lax.all_gather(bitpack(local), axis_name, tiled=True)


@contextlib.contextmanager
def collective_errors():
    """Turn a failed cross-process collective into a :class:`CollectiveError` that says what probably happened.

    Example:
        >>> from eventjax import distributed
        >>> with distributed.collective_errors():
        ...     pass
    """
    try:
        yield
    except (ValueError, RuntimeError) as err:
        text = str(err)
        # Only errors of the transport or of the coordination service: any other error passes unchanged.
        if not ('gloo' in text.lower() or 'nccl' in text.lower() or 'UNAVAILABLE:' in text):
            raise
        raise CollectiveError(
            f'process {jax.process_index()} of {jax.process_count()}: a collective across processes failed; '
            f'another process most likely died or was killed: read its log for the first error. '
            f'Cause: {text.splitlines()[0] if text else type(err).__name__}') from err


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
    ``EVENTJAX_PROCESS_ID``), or runs where a cluster manager places the
    processes (``cluster=True``, as with ``--cluster``).

    Example:
        >>> from eventjax import distributed
        >>> distributed.is_member(), distributed.is_member(cluster=True)  # run by hand, outside a job
        (False, True)
    """
    return cluster or os.environ.get(ENV_PROCESS_ID) is not None


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
