"""What ``eventjax bench`` measures about the machine before the kernels: bandwidth, call floor, load."""

from __future__ import annotations

import os
import time

import attrs
import jax
import jax.numpy as jnp
import numpy as np

from benchmarks.timing import median_us

__all__ = ['Machine', 'measure_bandwidth', 'measure_device_bandwidth', 'measure_machine']


@attrs.frozen
class Machine:
    """The machine a run measured.

    Attributes:
        bandwidth_gbs: memory bandwidth (GB/s) of a large numpy copy, the
            denominator of every memory floor.
        copy_mib: the size of that copy's source (MiB).
        call_us: median time of a jitted call that does (almost) nothing:
            the dispatch cost every jax-level product pays on top of its floor.
        cpus: CPU cores visible to this process.
        load: the 1-minute load average at the start (None where the OS has none).
        method: how the bandwidth was measured: a numpy copy in host memory
            when the kernels run on the CPU, a jitted copy on the device
            otherwise (the kernels' data lives there).
    """

    bandwidth_gbs: float
    copy_mib: int
    call_us: float
    cpus: int
    load: float | None
    method: str = 'numpy copy'

    def describe(self) -> str:
        """One line for the top of the report.

        Example:
            >>> print(Machine(12.5, 128, 4.2, 2, 1.5).describe())
            memory bandwidth 12.5 GB/s (numpy copy of 128 MiB, best of 10), jitted no-op call 4.2 us, 2 cores, load 1.5
        """
        load = '' if self.load is None else f', load {self.load:.1f}'
        return (f'memory bandwidth {self.bandwidth_gbs:.1f} GB/s ({self.method} of {self.copy_mib} MiB, best of 10), '
                f'jitted no-op call {self.call_us:.1f} us, {self.cpus} cores{load}')


def measure_bandwidth(mib: int = 128, repeats: int = 10) -> float:
    """This machine's memory bandwidth in GB/s: the best of ``repeats`` numpy copies of ``mib`` MiB.

    A copy reads and writes ``mib`` MiB each, so 2 x ``mib`` MiB count as
    moved; ``mib`` well above the last-level cache (32 MiB here) keeps the
    caches out of it. The best run is the least disturbed by other work (on a
    loaded 2-core machine single copies varied 3x from run to run).

    Example:
        >>> measure_bandwidth(mib=8, repeats=1) > 0.1
        True
    """
    src = np.ones(mib * 2**18, np.float32)
    dst = np.empty_like(src)
    best = float('inf')
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        np.copyto(dst, src)
        best = min(best, time.perf_counter() - t0)
    return 2 * src.nbytes / best / 1e9


def measure_device_bandwidth(mib: int = 256, repeats: int = 10) -> float:
    """The default JAX device's memory bandwidth in GB/s: the best of ``repeats`` jitted ``x + 1`` over ``mib`` MiB.

    Read and write both count, as in :func:`measure_bandwidth`; for a GPU,
    whose kernels read device memory, not the host's.

    Example:
        >>> measure_device_bandwidth(mib=8, repeats=1) > 0.1
        True
    """
    x = jnp.ones(mib * 2**18, jnp.float32)
    copy = jax.jit(lambda x: x + 1).lower(x).compile()
    jax.block_until_ready(copy(x))
    best = float('inf')
    for _ in range(max(1, repeats)):
        t0 = time.perf_counter()
        jax.block_until_ready(copy(x))
        best = min(best, time.perf_counter() - t0)
    return 2 * x.nbytes / best / 1e9


def measure_machine(quick: bool = False) -> Machine:
    """Bandwidth, the jitted-call floor, cores and load.

    On the CPU the bandwidth is a numpy copy of 128 MiB (64 MiB when
    ``quick``); on a GPU or TPU a jitted copy of 1 GiB (256 MiB) on the device.
    """
    platform = jax.default_backend()
    if platform == 'cpu':
        mib, method = (64 if quick else 128), 'numpy copy'
        bandwidth = measure_bandwidth(mib)
    else:
        mib, method = (256 if quick else 1024), f'jax copy on {platform}'
        bandwidth = measure_device_bandwidth(mib)
    noop = jax.jit(lambda x: x + 1).lower(jnp.ones(4, jnp.float32)).compile()
    call = median_us(noop, (jnp.ones(4, jnp.float32),), budget_s=0.05 if quick else 0.2)
    try:
        load = os.getloadavg()[0]
    except OSError:
        load = None
    return Machine(bandwidth, mib, call, os.cpu_count() or 1, load, method)
