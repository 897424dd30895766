"""Deprecated: the ``numba`` backend's public names are in :mod:`eventjax.backends.numba`.

Kept for one release so code written against this module's documented names
keeps working; each name warns where it is used.
"""

from eventjax.backends.deprecation import moved_names

__getattr__ = moved_names('numba_bridge', 'numba', ('bounds_checked', 'report_error', 'numba_kernel_generator'))
