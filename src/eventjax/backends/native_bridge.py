"""Deprecated: the ``native`` backend's public names are in :mod:`eventjax.backends.native`.

Kept for one release so code written against this module's documented names
keeps working; each name warns where it is used.
"""

from eventjax.backends.deprecation import moved_names

__getattr__ = moved_names('native_bridge', 'native', ('NativeKernel', 'c_type', 'ffi_type', 'cuda_arch'))
