"""The dense family: ``binary_densemv`` and ``binary_densemm``."""

from eventjax.kernels.dense.binary_densemm import binary_densemm
from eventjax.kernels.dense.binary_densemv import binary_densemv

__all__ = ['binary_densemm', 'binary_densemv']
