"""Deprecated: the ``native`` backend's public names are in :mod:`eventjax.backends.native`.

Kept for one release so code written against this module's documented names
keeps working; each name warns where it is used.
"""

import importlib
import warnings

_NAMES = ('NativeKernel', 'c_type', 'ffi_type', 'cuda_arch')


def __getattr__(name: str):
    if name in _NAMES:
        warnings.warn(f'eventjax.backends.native_bridge.{name} is deprecated; import it from eventjax.backends.native '
                      f'(from eventjax.backends.native import {name}).', DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module('eventjax.backends.native'), name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
