"""The fixed-connection-number (FCN) family: ``fcnmv``, ``fcnmm``, ``binary_fcnmv``, ``binary_fcnmm``.

Each of the ``m`` rows holds exactly ``k`` connections, stored as ``(m, k)``
``indices`` and ``(m, k)`` (or one homogeneous) ``weights``. ``arguments.py``
holds the checks all four share; ``reference.py`` the pure-JAX oracle;
``jax_impl.py`` the event-driven ``jax`` backend; ``numba_impl.py`` and
``warp_impl.py`` the other backends. Autodiff and batching come from
:mod:`eventjax.kernels.common.rules`, as for CSR.
"""

from eventjax.kernels.fcn.binary_fcnmm import binary_fcnmm
from eventjax.kernels.fcn.binary_fcnmv import binary_fcnmv
from eventjax.kernels.fcn.fcnmm import fcnmm
from eventjax.kernels.fcn.fcnmv import fcnmv

__all__ = ['binary_fcnmm', 'binary_fcnmv', 'fcnmm', 'fcnmv']
