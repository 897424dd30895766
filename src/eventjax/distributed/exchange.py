"""The spike exchange: which neurons a process owns, and every process's spikes gathered, one bit a neuron.

The functions run inside the step, over a mesh axis (``shard_map`` on JAX's
multi-process runtime) or over a :class:`~eventjax.distributed.Job` (on MPI
too).
"""

from __future__ import annotations

import contextlib

import jax
import jax.numpy as jnp

from eventjax.distributed.job import Job, current
from eventjax.errors import CollectiveError
from eventjax.kernels.indexed import bitpack


def _gather(axis):
    """The all-gather along ``axis``: a :class:`Job`'s, or ``shard_map``'s over the named mesh axis."""
    if isinstance(axis, Job):
        return axis.all_gather
    return lambda x: jax.lax.all_gather(x, axis, tiled=True)


def _check_block(local, multiple, what):
    if local.shape[0] % multiple:
        raise ValueError(f'{what}(): the local block must hold a multiple of {multiple} neurons, got '
                         f'{local.shape[0]}; size blocks with block_size(n, processes, multiple={multiple}).')


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


def all_gather_spikes(local: jax.Array, axis_name: str | Job) -> jax.Array:
    """Inside the step: every process's spike block, gathered into one bool vector.

    The spikes travel packed, one bit per neuron, so a step moves
    ``ceil(n / 8)`` bytes to each process whatever the firing rate.

    Args:
        local: this shard's spikes, bool of shape ``(b,)`` with ``b`` a multiple of 8.
        axis_name: the mesh axis the neurons are split over (inside ``shard_map``), or the
            :class:`Job` (inside its :meth:`Job.program`, on any transport).

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
    _check_block(local, 8, 'all_gather_spikes')
    return jnp.unpackbits(_gather(axis_name)(jnp.packbits(local.astype(bool)))).astype(bool)


def all_gather_spike_words(local: jax.Array, axis_name: str | Job) -> jax.Array:
    """Inside the step: every process's spikes gathered as packed words, for the packed products.

    The words are :func:`eventjax.bitpack`'s (bit ``b`` of word ``w`` is
    neuron ``32 w + b``), so :func:`eventjax.binary_csrmv_packed` and
    :func:`eventjax.binary_fcnmv_packed` multiply them without unpacking.
    Each step moves ``n / 8`` bytes, as :func:`all_gather_spikes` does.

    Args:
        local: this shard's spikes, bool of shape ``(b,)`` with ``b`` a multiple of 32.
        axis_name: the mesh axis, or the :class:`Job` (as for :func:`all_gather_spikes`).

    Returns:
        uint32 ``(b * axis_size / 32,)``: the packed spikes of every shard, in shard order.

    Example:
        >>> import jax.numpy as jnp
        >>> from eventjax import distributed
        >>> job = distributed.current()  # the job this process joined (here: one process)
        >>> step = job.program(lambda s: distributed.all_gather_spike_words(s, job), in_specs=job.spec,
        ...                    out_specs=job.spec)
        >>> step(job.put(jnp.arange(32) < 2)).tolist()
        [3]
    """
    _check_block(local, 32, 'all_gather_spike_words')
    return _gather(axis_name)(bitpack(local))


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
        job = current()
        raise CollectiveError(
            f'process {job.index} of {job.count}: a collective across processes failed; '
            f'another process most likely died or was killed: read its log for the first error. '
            f'Cause: {text.splitlines()[0] if text else type(err).__name__}') from err
