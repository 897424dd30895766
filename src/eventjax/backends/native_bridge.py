"""Deprecated: the ``native`` backend's public names are in :mod:`eventjax.backends.native`.

Kept until eventjax 0.3.0, which removes this module, so code written
against its documented names keeps working; each name warns where it is used.
"""

from eventjax.backends.deprecation import moved_names

REMOVED_IN = '0.3.0'

__getattr__ = moved_names('native_bridge', 'native', REMOVED_IN,
                          ('NativeKernel', 'c_type', 'ffi_type', 'cuda_arch'))
