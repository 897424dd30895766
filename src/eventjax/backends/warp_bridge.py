"""Deprecated: the ``warp`` backend's public names are in :mod:`eventjax.backends.warp`.

Kept for one release so code written against this module's documented names
keeps working; each name warns where it is used.
"""

import importlib
import warnings

_NAMES = ('WarpKernelSpec', 'ByInputDtypes', 'warp_dtype', 'import_warp', 'warp_kernel_generator',
          'SUPPORTED_WARP_DTYPES')


def __getattr__(name: str):
    if name in _NAMES:
        warnings.warn(f'eventjax.backends.warp_bridge.{name} is deprecated; import it from eventjax.backends.warp '
                      f'(from eventjax.backends.warp import {name}).', DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module('eventjax.backends.warp'), name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
