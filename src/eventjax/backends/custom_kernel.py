"""The public ``XLACustomKernel``: the primitive machinery plus one ``def_<backend>_kernel`` per bridge.

The machinery (resolution, lowering, rules) is
:class:`eventjax.primitive.kernel.KernelPrimitive` and knows no backend by
name. This class adds :meth:`XLACustomKernel.def_bridge_kernel` and, for each
bridge listed in :mod:`eventjax.backends.registry`, a ``def_<name>_kernel``
method that calls it (a test keeps the methods and the list in step; each
kernel generator's contract is its bridge's ``contract``).
"""

from __future__ import annotations

from collections.abc import Callable

from eventjax.backends.bridge import Bridge
from eventjax.backends.registry import get_bridge
from eventjax.config import normalize_platform
from eventjax.primitive import KernelPrimitive
from eventjax.primitive.chain import link

__all__ = ['XLACustomKernel']


def _wrap(bridge: Bridge, kernel_generator: Callable, platform: str) -> Callable:
    """The bridge's wrap of ``kernel_generator``, recorded for ``eventjax info --kernel``."""
    return link(bridge.wrap(kernel_generator, platform), kernel_generator, f"the {bridge.name} bridge's wrap")


class XLACustomKernel(KernelPrimitive):
    """A custom JAX primitive with kernels for several backends and platforms.

    Kernels are registered per (backend, platform) with a kernel generator
    ``kg(**static_params, outs=outs)``; a call picks one per platform
    (per-call ``backend=`` > thread override > global ``set_backend`` > this
    primitive's default > the first kernel registered for the platform).

    Example:
        >>> import jax, jax.numpy as jnp
        >>> import eventjax as ej
        >>> double = ej.XLACustomKernel('double_example')
        >>> double.def_jax_kernel(lambda outs: lambda x: (2 * x,))
        >>> x = jnp.arange(3.0)
        >>> double(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype))
        Array([0., 2., 4.], dtype=float32)
    """

    def def_bridge_kernel(self, backend: str, kernel_generator: Callable, platform: str | None = None,
                          asdefault: bool = False, *, companions: tuple[str, ...] | None = None) -> None:
        """Register a kernel through the bridge of ``backend`` (what every ``def_<backend>_kernel`` calls).

        ``platform`` None registers for the bridge's default platform, or for
        every platform it serves when it has no default. ``companions``: the
        further platforms that get the kernel too (None: what the bridge says,
        e.g. the cpu for pallas while interpret mode is on).

        Example:
            >>> import eventjax as ej
            >>> p = ej.XLACustomKernel('def_bridge_kernel_example')
            >>> p.def_bridge_kernel('jax', lambda outs: lambda x: (x,), platform='cpu')
            >>> p.available_backends('cpu')
            ('jax',)
        """
        bridge = get_bridge(backend)
        who = f'{self.name}.def_{backend}_kernel()'
        if platform is None:
            platforms = bridge.platforms if bridge.default_platform is None else (bridge.default_platform,)
        else:
            platforms = (normalize_platform(platform, who=who),)
        for p in platforms:
            if p not in bridge.platforms:
                raise ValueError(f'{who}: {backend} kernels register for {", ".join(bridge.platforms)}, '
                                 f'not {p}; {bridge.hint}')
        for p in platforms:
            self.def_kernel(backend, p, _wrap(bridge, kernel_generator, p), asdefault=asdefault)
            for extra in bridge.companions(p) if companions is None else companions:
                self.def_kernel(backend, extra, _wrap(bridge, kernel_generator, extra))


    def def_cuda_raw_kernel(self, kernel_generator: Callable, asdefault: bool = False) -> None:
        """brainevent's name: register a gpu kernel that calls an FFI target of :func:`eventjax.load_cuda_inline`.

        ``kernel_generator(**static_params, outs=outs)`` returns a JAX-traceable
        function of the input arrays that calls ``jax.ffi.ffi_call`` on a target
        loaded with ``load_cuda_inline`` or ``load_cuda_file``; it becomes the
        ``cuda`` kernel of the gpu. ``def_cuda_kernel`` takes a ``NativeKernel``
        generator instead and builds the source itself.

        Example:
            >>> import eventjax as ej
            >>> p = ej.XLACustomKernel('def_cuda_raw_kernel_example')
            >>> p.def_cuda_raw_kernel(lambda outs: lambda x: (x,))
            >>> p.available_backends('gpu')
            ('cuda',)
        """
        self.def_kernel('cuda', 'gpu', kernel_generator, asdefault=asdefault)

    # One method per bridge of eventjax.backends.registry.BRIDGES, in its order.

    def def_jax_kernel(self, kernel_generator: Callable, platform: str | None = None, asdefault: bool = False) -> None:
        """Register a jax kernel for ``platform`` (default: every platform it serves): cpu, gpu, tpu.

        ``kernel_generator(**static_params, outs=outs)`` returns a JAX-traceable
        function of the input arrays that returns one array per entry of ``outs``.
        Usage: ``p.def_jax_kernel(kernel_generator)``.
        """
        self.def_bridge_kernel('jax', kernel_generator, platform, asdefault)

    def def_numba_kernel(self, kernel_generator: Callable, platform: str | None = 'cpu',
                         asdefault: bool = False) -> None:
        """Register a numba kernel for the cpu.

        ``kernel_generator(**static_params, outs=outs)`` returns an ``@numba.njit``
        ``kernel(*inputs, *outputs[, err])`` that fills its outputs in place (the
        contract: ``eventjax.backends.numba.BRIDGE.contract``).
        Usage: ``p.def_numba_kernel(kernel_generator)``.
        """
        self.def_bridge_kernel('numba', kernel_generator, platform, asdefault)

    def def_warp_kernel(self, kernel_generator: Callable, platform: str | None = 'gpu',
                        asdefault: bool = False) -> None:
        """Register a warp kernel for ``platform`` (default 'gpu'): one of cpu, gpu.

        ``kernel_generator(**static_params, outs=outs)`` returns a ``WarpKernelSpec``
        (or a warp kernel, ``(kernel, dim)`` or ``ByInputDtypes``; the contract:
        ``eventjax.backends.warp.BRIDGE.contract``).
        Usage: ``p.def_warp_kernel(kernel_generator)``.
        """
        self.def_bridge_kernel('warp', kernel_generator, platform, asdefault)

    def def_pallas_kernel(self, platform: str, kernel_generator: Callable, asdefault: bool = False) -> None:
        """Register a pallas kernel for ``platform``: one of gpu, tpu (and the cpu, interpreted, in interpret mode).

        ``kernel_generator(**static_params, outs=outs)`` returns
        ``call(*arrays, interpret)`` that builds and applies a ``pallas_call``.
        Usage: ``p.def_pallas_kernel('gpu', kernel_generator)``.
        """
        self.def_bridge_kernel('pallas', kernel_generator, platform, asdefault)

    def def_cpp_kernel(self, kernel_generator: Callable, platform: str | None = 'cpu', asdefault: bool = False) -> None:
        """Register a C++ kernel for the cpu.

        ``kernel_generator(**static_params, outs=outs)`` returns an
        :class:`eventjax.NativeKernel`: the C++ source of an XLA FFI handler,
        compiled at the first lowering and cached on disk by content.
        Usage: ``p.def_cpp_kernel(kernel_generator)``.
        """
        self.def_bridge_kernel('cpp', kernel_generator, platform, asdefault)

    def def_cuda_kernel(self, kernel_generator: Callable, platform: str | None = 'gpu',
                        asdefault: bool = False) -> None:
        """Register a CUDA kernel for the gpu.

        ``kernel_generator(**static_params, outs=outs)`` returns an
        :class:`eventjax.NativeKernel`: the CUDA source of an XLA FFI handler,
        compiled with nvcc at the first lowering and cached on disk by content.
        Usage: ``p.def_cuda_kernel(kernel_generator)``.
        """
        self.def_bridge_kernel('cuda', kernel_generator, platform, asdefault)

    def def_numba_cuda_kernel(self, kernel_generator: Callable, platform: str | None = 'gpu',
                              asdefault: bool = False) -> None:
        """Register a numba-cuda kernel for the gpu.

        ``kernel_generator(**static_params, outs=outs)`` returns an
        :class:`eventjax.NumbaCudaKernel`: a ``numba.cuda.jit`` kernel and its launch.
        Usage: ``p.def_numba_cuda_kernel(kernel_generator)``.
        """
        self.def_bridge_kernel('numba_cuda', kernel_generator, platform, asdefault)

