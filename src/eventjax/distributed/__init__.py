"""Running one network over several processes: by MPI, or on JAX's own multi-process runtime.

Thin helpers; MPI (mpi4jax, inside the jitted step) or JAX (gloo between CPU
processes, NCCL between GPUs) moves the data, nothing here is a transport.
:func:`initialize` joins the job with bounded timeouts and :func:`current`
says how its collectives travel (:mod:`~eventjax.distributed.job`);
:func:`own_rows` and :func:`all_gather_spike_words` split the neurons and
exchange their spikes (:mod:`~eventjax.distributed.exchange`); :func:`spawn`
and :func:`launch` start a job on localhost
(:mod:`~eventjax.distributed.launching`).
"""

from eventjax.distributed.exchange import (
    all_gather_spike_words,
    all_gather_spikes,
    block_size,
    collective_errors,
    own_rows,
)
from eventjax.distributed.job import (
    ENV_BIND,
    ENV_COORDINATOR,
    ENV_NUM_PROCESSES,
    ENV_PROCESS_ID,
    ENV_TRANSPORT,
    Job,
    check_job,
    check_same_config,
    current,
    initialize,
    mpi_launched,
)
from eventjax.distributed.launching import ProcessResult, free_port, is_member, launch, run_member, spawn

__all__ = ['ENV_BIND', 'ENV_COORDINATOR', 'ENV_NUM_PROCESSES', 'ENV_PROCESS_ID', 'ENV_TRANSPORT', 'Job',
           'ProcessResult', 'all_gather_spike_words', 'all_gather_spikes', 'block_size', 'check_job',
           'check_same_config', 'collective_errors', 'current', 'free_port', 'initialize', 'is_member',
           'launch', 'mpi_launched', 'own_rows', 'run_member', 'spawn']
