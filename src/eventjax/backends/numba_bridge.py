"""Deprecated: the ``numba`` backend's public names are in :mod:`eventjax.backends.numba`.

Kept for one release so code written against this module's documented names
keeps working; each name warns where it is used.
"""

import importlib
import warnings

_NAMES = ('bounds_checked', 'report_error', 'numba_kernel_generator')


def __getattr__(name: str):
    if name in _NAMES:
        warnings.warn(f'eventjax.backends.numba_bridge.{name} is deprecated; import it from eventjax.backends.numba '
                      f'(from eventjax.backends.numba import {name}).', DeprecationWarning, stacklevel=2)
        return getattr(importlib.import_module('eventjax.backends.numba'), name)
    raise AttributeError(f'module {__name__!r} has no attribute {name!r}')
