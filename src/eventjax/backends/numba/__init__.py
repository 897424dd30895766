"""The ``numba`` backend's declaration (cpu); its machinery is :mod:`eventjax.backends.numba.bridge`.

The declaration lives apart from the machinery because the machinery
imports numba at import time, and importing eventjax must not.
"""

from __future__ import annotations

from collections.abc import Callable

from eventjax.backends import bridge as core
from eventjax.backends.bridge import BackendStatus, Bridge

__all__ = ['BRIDGE', 'status', 'wrap']


def status(platform: str) -> BackendStatus:
    """numba runs on the cpu when the package is installed.

    Example:
        >>> status('gpu').available
        False
    """
    if platform != 'cpu':
        return BackendStatus('numba', platform, False, 'numba kernels run on the CPU only.',
                             "Use backend 'warp' or 'pallas' on gpu, 'pallas' on tpu.")
    if core.package_missing('numba'):
        return BackendStatus('numba', platform, False, 'The numba package is not installed.',
                             'pip install numba')
    return BackendStatus('numba', platform, True)


def wrap(kernel_generator: Callable, platform: str) -> Callable:
    """Wrap an njit-kernel generator; numba is imported at the first lowering."""

    def lazy_generator(*, input_output_aliases=None, **params):
        from eventjax.backends.numba import bridge as numba_bridge  # noqa: PLC0415

        return numba_bridge.numba_kernel_generator(kernel_generator)(input_output_aliases=input_output_aliases,
                                                                     **params)

    return lazy_generator


BRIDGE = Bridge(
    'numba', ('cpu',), status, wrap, default_platform='cpu',
    hint="numba compiles for the CPU only; use def_warp_kernel or def_pallas_kernel on accelerators.",
    contract='``kernel_generator(**static_params, outs=outs)`` returns an ``@numba.njit`` '
             '``kernel(*inputs, *outputs[, err])`` that fills its outputs in place; it runs as a typed '
             'XLA FFI handler, with no Python and no GIL on the call path. An output the call aliases to an '
             'input (input_output_aliases) starts out holding that input\'s values. numba is imported only '
             'when the kernel is first lowered.')
