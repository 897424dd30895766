"""The just-in-time connectivity (JITC) family: ``jitcmv``, ``jitcmm``, ``binary_jitcmv``, ``binary_jitcmm``.

A JITC matrix is never stored: each product regenerates the connections it
needs from ``(seed, prob, law, weights)`` through the counter-based generator
of ``generator.py``, which the ``jax``, ``numba`` and ``warp`` kernels
evaluate bit for bit alike. ``arguments.py`` holds the checks all four
share; ``reference.py`` the pure-JAX kernels; ``numba_impl.py`` and
``warp_impl.py`` the other backends.
"""

from eventjax.kernels.jitc.binary_jitcmm import binary_jitcmm
from eventjax.kernels.jitc.binary_jitcmv import binary_jitcmv
from eventjax.kernels.jitc.jitcmm import jitcmm
from eventjax.kernels.jitc.jitcmv import jitcmv

__all__ = ['binary_jitcmm', 'binary_jitcmv', 'jitcmm', 'jitcmv']
