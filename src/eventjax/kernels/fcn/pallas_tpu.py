"""TPU (Mosaic) kernels of the FCN family: ``binary_fcnmv/mm`` and ``fcnmv/mm``, both directions.

Each generator ``kg(*, shape, transpose, outs)`` returns ``call(weights,
indices, x, *, interpret)``, the form :mod:`eventjax.backends.pallas`
expects; :mod:`eventjax.kernels.fcn.pallas_impl` names them
``<operator>_tpu_kernel``. ``transpose=True`` visits only the rows of the
events (every row of a float product), fetching each row by a DMA driven by
its id, and adds its entries into the result as a one-hot product on the
MXU (:mod:`eventjax.kernels.common.pallas.tpu_rows`); ``transpose=False``
keeps ``x`` in VMEM, its events packed to bits, and picks each entry's value
by a lane gather (:mod:`eventjax.kernels.common.pallas.tpu_gather`). A
matrix ``x`` runs column by column; ``s @ W`` over more than 131,072 rows
runs in blocks of rows, one program each; a problem too large for the
chip's on-core memories otherwise takes the ``jax`` kernel.
"""

from __future__ import annotations

import jax.numpy as jnp

from eventjax.kernels.common.pallas.tpu_gather import fcn_gather
from eventjax.kernels.common.pallas.tpu_pieces import by_columns
from eventjax.kernels.common.pallas.tpu_rows import fits_the_chip, row_scatter
from eventjax.kernels.fcn.jax_impl import _product

__all__ = ['binary_fcnmv_tpu_kernel', 'fcnmv_tpu_kernel']


def _call(*, shape, transpose, out, events):
    m, n = shape

    def call(weights, indices, x, *, interpret):
        if m == 0 or n == 0 or indices.shape[1] == 0 or x.size == 0:
            return jnp.zeros(out.shape, out.dtype)

        def column(v):
            if transpose:
                return row_scatter(weights, indices, v, n=n, events=events, out_dtype=out.dtype,
                                   interpret=interpret)
            return fcn_gather(weights, indices, v, n=n, events=events, out_dtype=out.dtype, interpret=interpret)

        def kernel():
            return by_columns(column, x)

        def fallback():
            return _product(weights, indices, x, shape=shape, transpose=transpose, out_dtype=out.dtype,
                            binary=events)

        if not fits_the_chip(n=n, transpose=transpose, k=indices.shape[1]):
            return fallback()
        return kernel()

    return call


def fcnmv_tpu_kernel(*, shape, transpose, outs):
    """``A @ x`` (``x @ A`` when ``transpose``) for a float ``x`` on tpu; also serves ``fcnmm``."""
    return _call(shape=shape, transpose=transpose, out=outs[0], events=False)


def binary_fcnmv_tpu_kernel(*, shape, transpose, outs):
    """The same for events (``True`` or ``> 0``); also serves ``binary_fcnmm``."""
    return _call(shape=shape, transpose=transpose, out=outs[0], events=True)
