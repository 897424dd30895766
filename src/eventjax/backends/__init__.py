"""One bridge per backend, listed once in ``registry.py``; see README.md in this folder.

The bridges import their optional packages (numba, warp, pallas) lazily.
"""

from eventjax.backends.availability import BackendStatus, backends_available, require_backend
from eventjax.backends.custom_kernel import XLACustomKernel

__all__ = ['BackendStatus', 'XLACustomKernel', 'backends_available', 'require_backend']
