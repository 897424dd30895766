"""Joining a job: the process's place, the transport its collectives take, and the checks that it can run.

A process learns its place from the arguments of :func:`initialize`, else
from an MPI launcher (``mpirun``, ``mpiexec``, ``srun --mpi``), else from
``JAX_COORDINATOR_ADDRESS`` (JAX's own variable), ``EVENTJAX_NUM_PROCESSES``
and ``EVENTJAX_PROCESS_ID``, else from JAX's cluster auto-detection (Slurm,
Open MPI, mpi4py, Kubernetes).
"""

from __future__ import annotations

import contextlib
import importlib.util
import json
import os
import socket
import sys
import time
from collections.abc import Callable, Mapping

import jax
import jax.numpy as jnp
import numpy as np
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from eventjax.errors import ConfigMismatchError, CoordinatorUnreachableError

ENV_NUM_PROCESSES = 'EVENTJAX_NUM_PROCESSES'
ENV_PROCESS_ID = 'EVENTJAX_PROCESS_ID'
ENV_COORDINATOR = 'JAX_COORDINATOR_ADDRESS'
ENV_TRANSPORT = 'EVENTJAX_TRANSPORT'
ENV_BIND = 'EVENTJAX_BIND'
# Set by the MPI launchers in each process they start: MPICH's and Intel's Hydra (PMI_*), Open MPI, PMIx.
MPI_LAUNCHER_VARIABLES = ('PMI_SIZE', 'OMPI_COMM_WORLD_SIZE', 'PMIX_RANK')
MPI_EXTRA = 'pip install "eventjax[mpi]" (or make mpi)'
AXIS = 'p'

_JOB: Job | None = None


class Job:
    """The job this process belongs to: its place, and the collectives of the step code on its transport.

    ``transport`` is ``'mpi'`` (each process its own JAX; mpi4jax exchanges
    inside the jitted step), ``'gloo'`` (JAX's multi-process runtime: global
    arrays over one mesh, ``shard_map`` collectives) or ``'local'`` (one
    process, the gloo code on a one-device mesh). Step code written with
    :meth:`program`, :meth:`put`, :meth:`axis_index` and :meth:`all_gather`
    (or :func:`all_gather_spike_words` given the job) runs unchanged on each.

    Example:
        >>> import jax.numpy as jnp
        >>> from eventjax import distributed
        >>> job = distributed.current()  # outside a job: one local process
        >>> f = job.program(lambda s: job.all_gather(s), in_specs=job.spec, out_specs=job.spec)
        >>> f(job.put(jnp.arange(3))).tolist()
        [0, 1, 2]
    """

    spec = P(AXIS)

    def __init__(self, transport: str, index: int, count: int, comm=None) -> None:
        self.transport, self.index, self.count, self.comm = transport, index, count, comm
        self._mesh = None

    def __repr__(self) -> str:
        return f'Job({self.transport!r}, process {self.index} of {self.count})'

    @property
    def mesh(self) -> Mesh:
        """One device per process, on the axis ``'p'`` (gloo and local)."""
        if self._mesh is None:
            self._mesh = Mesh(np.array(jax.devices()), (AXIS,))
        return self._mesh

    def put(self, x, spec: P = spec):
        """This process's part ``x`` as the step's input: the global array whose shard here is ``x`` (every axis
        that ``spec`` names ``'p'`` is this process's slice of a ``count`` times longer one), or ``x`` on this
        process's device under MPI. The buffer is shared, not copied, where its alignment allows."""
        device = jax.local_devices()[0]
        if self.transport == 'mpi':
            return jax.device_put(x, device, may_alias=True)
        x = np.asarray(x)
        names = tuple(spec) + (None,) * x.ndim
        shape = tuple(s * self.count if name == AXIS else s for s, name in zip(x.shape, names))
        return jax.make_array_from_single_device_arrays(
            shape, NamedSharding(self.mesh, spec), [jax.device_put(x, device, may_alias=True)])

    @staticmethod
    def local(x) -> np.ndarray:
        """This process's part of a step's output."""
        return np.asarray(x.addressable_data(0))

    def program(self, f: Callable, in_specs, out_specs, **shard_map_args) -> Callable:
        """``f`` over this process's parts, as a function of :meth:`put`'s arrays (for :func:`jax.jit`):
        ``shard_map`` over the mesh, or ``f`` itself under MPI."""
        if self.transport == 'mpi':
            return f
        return jax.shard_map(f, mesh=self.mesh, in_specs=in_specs, out_specs=out_specs, **shard_map_args)

    def axis_index(self):
        """Inside :meth:`program`: this process's index, traced."""
        if self.transport == 'mpi':
            return jnp.int32(self.index)
        return jax.lax.axis_index(AXIS)

    def all_gather(self, x):
        """Inside :meth:`program`: every process's ``x``, concatenated in process order along the first axis."""
        if self.transport == 'mpi':
            import mpi4jax

            return mpi4jax.allgather(x, comm=self.comm).reshape(self.count * x.shape[0], *x.shape[1:])
        return jax.lax.all_gather(x, AXIS, tiled=True)

    def allgather_host(self, x) -> np.ndarray:
        """Outside the step: every process's numpy ``x``, stacked on a new first axis (start-up, reports)."""
        x = np.asarray(x)
        if self.transport == 'mpi':
            return np.stack(self.comm.allgather(x))
        if self.count == 1:
            return x[None]
        from jax.experimental import multihost_utils

        return np.asarray(multihost_utils.process_allgather(x)).reshape(self.count, *x.shape)


def current() -> Job:
    """The job :func:`initialize` joined; without it, JAX's own processes (one, unless ``jax.distributed``
    was initialized directly).

    Example:
        >>> from eventjax import distributed
        >>> distributed.current()
        Job('local', process 0 of 1)
    """
    if _JOB is not None:
        return _JOB
    count = jax.process_count()
    return Job('gloo' if count > 1 else 'local', jax.process_index(), count)


def mpi_launched() -> bool:
    """Whether an MPI launcher started this process (and no eventjax launcher numbered it): then
    :func:`initialize` exchanges by MPI where mpi4jax is installed.

    Example:
        >>> from eventjax import distributed
        >>> distributed.mpi_launched()  # run by hand, not by mpirun
        False
    """
    return os.environ.get(ENV_PROCESS_ID) is None and any(v in os.environ for v in MPI_LAUNCHER_VARIABLES)


def _transport(transport, coordinator_address, process_id):
    transport = transport or os.environ.get(ENV_TRANSPORT) or 'auto'
    if transport not in ('auto', 'mpi', 'gloo'):
        raise ValueError(f"initialize(): transport must be 'auto', 'mpi' or 'gloo' (argument or {ENV_TRANSPORT}), "
                         f'got {transport!r}.')
    if transport != 'auto':
        return transport
    explicit = coordinator_address is not None or process_id is not None
    has_mpi = all(importlib.util.find_spec(m) is not None for m in ('mpi4py', 'mpi4jax'))
    return 'mpi' if mpi_launched() and not explicit and has_mpi else 'gloo'


def _join_mpi(num_processes, process_id, who):
    global _JOB
    try:
        from mpi4py import MPI
    except ImportError as err:
        raise ImportError(f"{who}: transport 'mpi' needs mpi4py and mpi4jax: {MPI_EXTRA}. ({err})") from None
    if importlib.util.find_spec('mpi4jax') is None:
        raise ImportError(f"{who}: transport 'mpi' needs mpi4jax: {MPI_EXTRA}.")
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    if (num_processes not in (None, size)) or (process_id not in (None, rank)):
        raise ValueError(f'{who}: MPI started this process as {rank} of {size}, but it was told '
                         f'process_id={process_id}, num_processes={num_processes}; drop them under an MPI launcher.')
    local = comm.Split_type(MPI.COMM_TYPE_SHARED)
    _bind_share(local.Get_rank(), local.Get_size(), who)
    local.Free()
    _JOB = Job('mpi', rank, size, comm)
    return rank, size


def _bind_share(local_rank, local_size, who):
    """Bind this process to its share of the machine's cores, and numba to as many threads, where the launcher
    bound nothing.

    MPI waits by polling: a process that arrives first at the exchange spins on a core. Unbound, the processes
    and their numba and XLA threads migrate over all cores, and the spinning one takes a core another process's
    thread needs; bound, each process spins only on its own cores. The threads started later inherit the
    binding, so it is set before JAX's and numba's thread pools start.
    """
    mode = os.environ.get(ENV_BIND, 'auto')
    if mode not in ('auto', 'none'):
        raise ValueError(f"{who}: {ENV_BIND} must be 'auto' or 'none', got {mode!r}.")
    if mode == 'none' or local_size < 2 or not hasattr(os, 'sched_setaffinity'):
        return
    cpus = sorted(os.sched_getaffinity(0))
    # a launcher's or the user's binding (mpirun -bind-to ..., taskset) leaves fewer cores than the machine's
    if len(cpus) != os.cpu_count() or local_size > len(cpus):
        return
    per = len(cpus) // local_size
    threads = os.environ.get('NUMBA_NUM_THREADS', '')
    if threads.isdigit() and int(threads) > per:
        return  # more threads asked for than the share has cores: they would take turns on it
    share = cpus[local_rank * per:(local_rank + 1) * per]
    # every thread running now (MPI's own among them); the ones started later inherit it from this one
    for tid in _threads():
        with contextlib.suppress(OSError):
            os.sched_setaffinity(tid, share)
    if 'NUMBA_NUM_THREADS' not in os.environ:
        if 'numba' in sys.modules:
            from eventjax.backends.numba import set_num_threads

            set_num_threads(per)
        else:
            os.environ['NUMBA_NUM_THREADS'] = str(per)


def _threads():
    """The ids of this process's threads (Linux), else this thread's (0)."""
    try:
        return [int(t) for t in os.listdir('/proc/self/task')]
    except OSError:
        return [0]


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
               shutdown_timeout: int = 30, quiet: bool = False, transport: str | None = None) -> tuple[int, int]:
    """Join a multi-process job, with the spikes exchanged by MPI or by JAX's gloo collectives, and bounded waits.

    Call it before any other JAX call. Under ``mpirun``, ``mpiexec`` or
    ``srun --mpi`` with the ``mpi`` extra installed, the processes exchange
    through MPI (mpi4jax inside the jitted step) and JAX stays one process
    each; otherwise they join JAX's multi-process runtime, whose CPU
    collectives go through gloo. :func:`current` then says which, and its
    methods run the same step code on either.

    On gloo every wait is bounded: a process that
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
        transport: ``'mpi'``, ``'gloo'`` or ``'auto'`` (the default, else
            ``$EVENTJAX_TRANSPORT``): MPI where an MPI launcher started the
            process and mpi4jax is installed, else gloo.

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
    if _transport(transport, coordinator_address, process_id) == 'mpi':
        return _join_mpi(num_processes, process_id, who)
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
        raise ValueError(f'{who}: no multi-process job found ({err}). Start the processes under Slurm or an MPI '
                         f'launcher (with the mpi extra: pip install "eventjax[mpi]"), or set {ENV_COORDINATOR}, '
                         f'{ENV_NUM_PROCESSES} and {ENV_PROCESS_ID} in each, or pass them to initialize().') from err
    global _JOB
    _JOB = Job('gloo', jax.process_index(), jax.process_count())
    return _JOB.index, _JOB.count


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
    job = current()
    me, count = job.index, job.count
    payload = json.dumps(dict(config), sort_keys=True, default=str).encode()
    if len(payload) > max_bytes:
        raise ValueError(f'check_same_config(): the configuration takes {len(payload)} bytes as JSON, '
                         f'more than max_bytes={max_bytes}; raise max_bytes or pass fewer entries.')
    buf = np.zeros(max_bytes + 4, np.uint8)
    buf[:4] = np.frombuffer(np.uint32(len(payload)).tobytes(), np.uint8)
    buf[4:4 + len(payload)] = np.frombuffer(payload, np.uint8)
    gathered = job.allgather_host(buf).reshape(count, -1)
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


