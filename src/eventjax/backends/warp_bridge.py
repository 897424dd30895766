"""Deprecated: the ``warp`` backend's public names are in :mod:`eventjax.backends.warp`.

Kept until eventjax 0.3.0, which removes this module, so code written
against its documented names keeps working; each name warns where it is used.
"""

from eventjax.backends.deprecation import moved_names

REMOVED_IN = '0.3.0'

__getattr__ = moved_names('warp_bridge', 'warp', REMOVED_IN,
                          ('WarpKernelSpec', 'ByInputDtypes', 'warp_dtype', 'import_warp', 'warp_kernel_generator',
                           'SUPPORTED_WARP_DTYPES'))
