"""Registering an operator's numba and warp kernels without importing numba or warp.

An operator module registers at import time; numba and warp are imported
only when a kernel is first lowered (``def_numba_kernel`` is lazy already;
warp kernels are typed from the operands' dtypes, see ``warp_typing``).
"""

from __future__ import annotations

import importlib.util
from collections.abc import Callable

__all__ = ['register_numba', 'register_warp']


def register_numba(prim, kernel_generator: Callable) -> None:
    """Register ``kernel_generator`` (returning an ``@njit`` kernel) as ``prim``'s cpu numba kernel.

    Numba becomes the cpu default when it is installed: it is the fastest
    cpu backend for these kernels.
    """
    prim.def_numba_kernel(kernel_generator, asdefault=importlib.util.find_spec('numba') is not None)


def register_warp(prim, factory: Callable) -> None:
    """Register ``factory(dtypes, **static, outs=...)`` as ``prim``'s warp kernel on cpu and gpu.

    Warp is the default on the gpu; on the cpu it is opt-in (``backend='warp'``).
    """
    def lazy(platform):
        def kg(**params):
            from eventjax.kernels.common.warp_typing import warp_by_dtypes
            return warp_by_dtypes(factory, platform)(**params)
        return kg

    for platform in ('cpu', 'gpu'):
        prim.def_kernel('warp', platform, lazy(platform), asdefault=platform == 'gpu')
