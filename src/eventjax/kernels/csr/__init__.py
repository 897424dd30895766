"""The CSR family: ``csrmv``, ``csrmm``, ``binary_csrmv``, ``binary_csrmm``.

``arguments.py`` holds the checks all four share; ``reference.py`` the
pure-JAX oracle; ``jax_impl.py`` the event-driven ``jax`` backend;
``numba_impl.py`` and ``warp_impl.py`` the other backends.
"""

from eventjax.kernels.csr.binary_csrmm import binary_csrmm
from eventjax.kernels.csr.binary_csrmv import binary_csrmv
from eventjax.kernels.csr.csrmm import csrmm
from eventjax.kernels.csr.csrmv import csrmv

__all__ = ['binary_csrmm', 'binary_csrmv', 'csrmm', 'csrmv']
