"""Deprecated: the ``warp`` backend's public names are in :mod:`eventjax.backends.warp`.

Kept for one release so code written against this module's documented names
keeps working; each name warns where it is used.
"""

from eventjax.backends.deprecation import moved_names

__getattr__ = moved_names('warp_bridge', 'warp', ('WarpKernelSpec', 'ByInputDtypes', 'warp_dtype', 'import_warp',
                                                  'warp_kernel_generator', 'SUPPORTED_WARP_DTYPES'))
