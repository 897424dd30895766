"""The ``warp`` backend (cpu, gpu): its declaration, and the names kernel authors import.

A warp kernel generator returns a :class:`WarpKernelSpec` (or
:class:`ByInputDtypes` when the kernel is typed by the input dtypes);
:func:`warp_dtype` maps a numpy dtype to warp's scalar type and
:func:`import_warp` imports warp once, quietly. The modules ``spec`` (those
declarations), ``bridge`` (the launch machinery) and ``quiet`` are
private.

Example:
    >>> from eventjax.backends.warp import ByInputDtypes, WarpKernelSpec, warp_dtype
"""

from eventjax.backends.warp.bridge import (
    BRIDGE,
    SUPPORTED_WARP_DTYPES,
    ByInputDtypes,
    WarpKernelSpec,
    import_warp,
    standard,
    status,
    warp_dtype,
    warp_kernel_generator,
)

__all__ = ['BRIDGE', 'SUPPORTED_WARP_DTYPES', 'ByInputDtypes', 'WarpKernelSpec', 'import_warp', 'standard', 'status',
           'warp_dtype', 'warp_kernel_generator']
