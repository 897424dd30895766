"""The ``numba_cuda`` backend's declaration (gpu); its machinery is :mod:`eventjax.backends.numba_cuda.bridge`.

A kernel generator returns a :class:`NumbaCudaKernel`: a ``numba.cuda.jit``
kernel and its launch configuration. The declaration lives apart from the
machinery because ``import numba.cuda`` takes seconds, and importing eventjax
must not pay for it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import attrs

from eventjax.backends import bridge as core
from eventjax.backends import native
from eventjax.backends.bridge import BackendStatus, Bridge
from eventjax.errors import KernelSpecError

__all__ = ['BRIDGE', 'NumbaCudaKernel', 'numba_cuda_kernel', 'status', 'wrap']

EXTRA = "pip install 'eventjax[numba-cuda]'"


def _dims(value: Any, what: str) -> tuple[int, ...] | None:
    if value is None:
        return None
    dims = (int(value),) if isinstance(value, (int,)) or hasattr(value, '__index__') else tuple(int(v) for v in value)
    if not 1 <= len(dims) <= 3 or any(d < 0 for d in dims):
        raise KernelSpecError(f'NumbaCudaKernel: {what} must be 1 to 3 non-negative ints, got {value!r}.')
    return dims


@attrs.frozen
class NumbaCudaKernel:
    """What a ``numba_cuda`` kernel generator returns: a ``numba.cuda.jit`` kernel and how to launch it.

    The kernel takes the inputs, then the outputs, as arrays (``kernel(*inputs, *outputs)``) and
    writes its outputs in place, like a ``numba`` CPU kernel. Give either ``launch_dims`` (the
    number of threads along each of 1 to 3 axes; the grid and block follow) or ``grid`` and
    ``block``.

    Attributes:
        kernel: the ``@numba.cuda.jit`` kernel.
        launch_dims: an int, a tuple, or ``callable(*input_shapes)`` returning one.
        grid, block: an explicit launch configuration (ints or tuples of up to 3).
        threads_per_block: the block size of a 1-axis ``launch_dims`` launch (2 axes use 16x16, 3 use 8x8x4).
        shared_mem: bytes of dynamic shared memory.
        zero_outputs: clear the outputs on the stream before the launch (kernels that accumulate
            with atomics need it; outputs otherwise arrive uninitialised). An output aliased to an
            input keeps the input's values.
        vmap_method: how ``jax.vmap`` runs the kernel (``jax.ffi.ffi_call``'s option); the default
            launches it once per batch element.

    Example:
        >>> spec = NumbaCudaKernel(kernel=None, launch_dims=1024)
        >>> spec.threads_per_block
        256
    """

    kernel: Any
    launch_dims: Any = None
    grid: Any = None
    block: Any = None
    threads_per_block: int = 256
    shared_mem: int = 0
    zero_outputs: bool = False
    vmap_method: str = 'sequential'

    def __attrs_post_init__(self) -> None:
        explicit = (self.grid is not None, self.block is not None)
        if explicit[0] != explicit[1]:
            raise KernelSpecError('NumbaCudaKernel: give grid and block together.')
        if explicit[0] == (self.launch_dims is not None):
            raise KernelSpecError('NumbaCudaKernel: give either launch_dims or (grid, block), '
                                  f'got {"both" if explicit[0] else "neither"}.')
        if explicit[0]:
            _dims(self.grid, 'grid')
            _dims(self.block, 'block')
        if not 1 <= int(self.threads_per_block) <= 1024:
            raise KernelSpecError(f'NumbaCudaKernel: threads_per_block must be 1..1024, got {self.threads_per_block}.')
        if int(self.shared_mem) < 0:
            raise KernelSpecError(f'NumbaCudaKernel: shared_mem must be >= 0 bytes, got {self.shared_mem}.')

    def launch(self, input_shapes: tuple[tuple[int, ...], ...]) -> tuple[tuple[int, int, int], tuple[int, int, int]]:
        """``(grid, block)``, three ints each, for inputs of these shapes.

        Example:
            >>> NumbaCudaKernel(None, launch_dims=1000).launch(())
            ((4, 1, 1), (256, 1, 1))
        """
        if self.grid is not None:
            grid, block = _dims(self.grid, 'grid'), _dims(self.block, 'block')
        else:
            dims = self.launch_dims(*input_shapes) if callable(self.launch_dims) else self.launch_dims
            dims = _dims(dims, 'launch_dims')
            caps = {1: (int(self.threads_per_block),), 2: (16, 16), 3: (8, 8, 4)}[len(dims)]
            block = tuple(max(1, min(cap, d)) for cap, d in zip(caps, dims))
            grid = tuple(-(-d // b) for d, b in zip(dims, block))
        pad = lambda t: tuple(t) + (1,) * (3 - len(t))  # noqa: E731
        grid, block = pad(grid), pad(block)
        threads = block[0] * block[1] * block[2]
        if threads > 1024:
            raise KernelSpecError(f'NumbaCudaKernel: a block of {block} is {threads} threads; CUDA allows 1024.')
        return grid, block


def status(platform: str) -> BackendStatus:
    """numba_cuda runs on a GPU JAX sees, with numba-cuda installed and a C++ compiler for its launcher.

    Example:
        >>> status('cpu').available
        False
    """
    missing = core.not_here('numba_cuda', platform, 'gpu', ('numba_cuda kernels run on NVIDIA GPUs only.',
                                                            "Use backend 'numba' (numba.njit kernels) on cpu."),
                            'numba_cuda', ('numba-cuda (numba.cuda.jit) is not installed.', EXTRA))
    if missing is not None:
        return missing
    tool = native.cpp_toolchain()
    if not tool.path:
        return BackendStatus('numba_cuda', platform, False,
                             f'its launcher is C++ and needs a compiler: {tool.reason}', tool.fix)
    if not core.jax_has_platform('gpu'):
        return core.no_device_status('numba_cuda', platform)
    return BackendStatus('numba_cuda', platform, True)


def wrap(kernel_generator: Callable, platform: str) -> Callable:
    """Wrap a generator of :class:`NumbaCudaKernel`; numba.cuda is imported at the first lowering.

    A generator may also return a JAX-traceable function (what brainevent's generators return,
    e.g. one made with :func:`numba_cuda_kernel`); it is called as it is.
    """

    def generator(*, outs: Any, input_output_aliases: Any = None, **params: Any) -> Callable:
        outs = tuple(outs) if isinstance(outs, (tuple, list)) else (outs,)
        spec = kernel_generator(**params, outs=outs)
        if isinstance(spec, NumbaCudaKernel):
            from eventjax.backends.numba_cuda import bridge as numba_cuda_bridge  # noqa: PLC0415

            return numba_cuda_bridge.launcher_call(spec, outs, input_output_aliases)
        if callable(spec) and not hasattr(spec, 'py_func'):
            return lambda *arrays: _as_tuple(spec(*arrays))
        raise KernelSpecError(f'numba_cuda backend: the kernel generator must return an eventjax.NumbaCudaKernel '
                              f'(the numba.cuda.jit kernel and its launch), got {type(spec).__name__} {spec!r}.')

    return generator


def _as_tuple(result: Any) -> tuple:
    return tuple(result) if isinstance(result, (tuple, list)) else (result,)


def numba_cuda_kernel(kernel: Any, outs: Any, *, grid: Any = None, block: Any = None, launch_dims: Any = None,
                      threads_per_block: int = 256, shared_mem: int = 0, zero_outputs: bool = False,
                      vmap_method: str = 'sequential', input_output_aliases: dict[int, int] | None = None) -> Callable:
    """brainevent's name: a JAX function that launches one ``numba.cuda.jit`` kernel on XLA's stream.

    ``kernel(*inputs, *outputs)`` writes the outputs in place; the launch is
    ``launch_dims`` threads or an explicit ``grid`` and ``block`` (see
    :class:`NumbaCudaKernel`). The result is one array for a single
    ``jax.ShapeDtypeStruct`` in ``outs``, else a tuple. Runs under ``jit``
    and ``vmap``; needs a GPU (``backends_available()['numba_cuda']['gpu']``).

    Example:
        >>> from numba import cuda  # doctest: +SKIP
        >>> @cuda.jit  # doctest: +SKIP
        ... def add(x, y, out):
        ...     i = cuda.grid(1)
        ...     if i < out.size:
        ...         out[i] = x[i] + y[i]
        >>> f = numba_cuda_kernel(add, jax.ShapeDtypeStruct((1024,), 'float32'), launch_dims=1024)  # doctest: +SKIP
        >>> f(x, y)  # doctest: +SKIP
    """
    spec = NumbaCudaKernel(kernel, launch_dims=launch_dims, grid=grid, block=block,
                           threads_per_block=threads_per_block, shared_mem=shared_mem, zero_outputs=zero_outputs,
                           vmap_method=vmap_method)
    single = not isinstance(outs, (tuple, list))
    shapes = (outs,) if single else tuple(outs)

    def call(*arrays: Any) -> Any:
        from eventjax.backends.numba_cuda import bridge as numba_cuda_bridge  # noqa: PLC0415

        result = numba_cuda_bridge.launcher_call(spec, shapes, input_output_aliases)(*arrays)
        return result[0] if single else result

    return call


BRIDGE = Bridge(
    'numba_cuda', ('gpu',), status, wrap, default_platform='gpu',
    hint="numba_cuda kernels run on the gpu; register numba.njit kernels with def_numba_kernel for the CPU.",
    contract='``kernel_generator(**static_params, outs=outs)`` returns an ``eventjax.NumbaCudaKernel``: a '
             '``numba.cuda.jit`` ``kernel(*inputs, *outputs)`` and its launch (``launch_dims``, or ``grid`` and '
             '``block``). numba-cuda compiles it to PTX at the first lowering (cached on disk by content); one C++ '
             "XLA FFI handler launches it on XLA's stream, with no Python and no GIL on the call path.")
