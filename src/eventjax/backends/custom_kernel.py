"""The public ``XLACustomKernel``: the primitive machinery plus one method per backend bridge.

The machinery (resolution, lowering, rules) lives in
:mod:`eventjax.primitive.kernel` and knows nothing of numba, warp or pallas;
this subclass adds the registration helpers that wrap a user's kernel
generator in its bridge, so the layers keep importing one way.
"""

from __future__ import annotations

from collections.abc import Callable

from eventjax.config import normalize_platform, snapshot
from eventjax.primitive import kernel as _machinery

__all__ = ['XLACustomKernel']


class XLACustomKernel(_machinery.XLACustomKernel):
    __doc__ = _machinery.XLACustomKernel.__doc__

    def def_numba_kernel(self, kernel_generator: Callable, asdefault: bool = False) -> None:
        """Register a numba kernel for the cpu.

        ``kernel_generator(**static_params, outs=outs)`` returns an
        ``@numba.njit`` ``kernel(*inputs, *outputs[, err])`` that fills its
        outputs in place; it runs as a typed XLA FFI handler, with no Python
        and no GIL on the call path. numba is imported only when the kernel
        is first lowered. See ``eventjax/backends/README.md``.

        Example:
            >>> import eventjax as ej
            >>> p = ej.XLACustomKernel('numba_example')
            >>> p.def_numba_kernel(lambda outs: None)
            >>> p.available_backends('cpu')
            ('numba',)
        """

        def lazy_generator(**params):
            from eventjax.backends import numba_bridge

            return numba_bridge.numba_kernel_generator(kernel_generator)(**params)

        self.def_kernel('numba', 'cpu', lazy_generator, asdefault=asdefault)

    def def_warp_kernel(self, kernel_generator: Callable, platform: str = 'gpu', asdefault: bool = False) -> None:
        """Register a warp kernel for ``platform`` ('gpu' or 'cpu').

        ``kernel_generator(**static_params, outs=outs)`` returns a
        :class:`~eventjax.backends.warp_bridge.WarpKernelSpec` (or a warp
        kernel, or ``(kernel, dim)``); see ``eventjax/backends/README.md``.

        Example:
            >>> import eventjax as ej
            >>> p = ej.XLACustomKernel('warp_example')
            >>> p.def_warp_kernel(lambda outs: None, platform='cpu')
            >>> p.available_backends('cpu')
            ('warp',)
        """
        from eventjax.backends.warp_bridge import warp_kernel_generator

        platform = normalize_platform(platform, who=f'{self.name}.def_warp_kernel()')
        if platform == 'tpu':
            raise ValueError(f'{self.name}.def_warp_kernel(): warp runs on cpu and gpu, not tpu; '
                             f"use def_pallas_kernel('tpu', ...) there.")
        self.def_kernel('warp', platform, warp_kernel_generator(kernel_generator, platform), asdefault=asdefault)

    def def_pallas_kernel(self, platform: str, kernel_generator: Callable, asdefault: bool = False) -> None:
        """Register a pallas kernel for ``platform`` ('gpu' or 'tpu').

        ``kernel_generator(**static_params, outs=outs)`` returns
        ``call(*arrays, interpret)`` that builds and applies a ``pallas_call``.
        When ``eventjax.config.get_pallas_cpu_interpret()`` is on, the same
        kernel is also registered for the cpu in interpret mode (never as the
        cpu default).

        Example:
            >>> import eventjax as ej
            >>> p = ej.XLACustomKernel('pallas_example')
            >>> p.def_pallas_kernel('gpu', lambda outs: None)
            >>> p.available_backends('gpu')
            ('pallas',)
        """
        from eventjax.backends.pallas_bridge import pallas_kernel_generator

        platform = normalize_platform(platform, who=f'{self.name}.def_pallas_kernel()')
        if platform == 'cpu':
            raise ValueError(f'{self.name}.def_pallas_kernel(): pallas compiles for gpu and tpu; '
                             f'for the cpu turn on eventjax.config.set_pallas_cpu_interpret(True) '
                             f'and register for gpu or tpu.')
        self.def_kernel('pallas', platform, pallas_kernel_generator(kernel_generator, platform), asdefault=asdefault)
        if snapshot().pallas_cpu_interpret:
            self.def_kernel('pallas', 'cpu', pallas_kernel_generator(kernel_generator, 'cpu'))
