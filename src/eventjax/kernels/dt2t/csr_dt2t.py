"""The ``csr_dt2t`` primitive: one value per stored entry, its weight times its row's (column's) ``y``.

The public functions (:mod:`.csrmv_dt2t`, :mod:`.fcnmv_dt2t`,
:mod:`.jitc_dt2t`) check their arguments and end here; FCN rows are CSR
rows of fixed length, and the just-in-time matrices are generated as CSR.
"""

from __future__ import annotations

import jax

from eventjax.backends import XLACustomKernel
from eventjax.kernels.common.operator import register_kernels
from eventjax.kernels.dt2t.rules import register_dt2t_rules

__all__ = ['bind_dt2t']


def bind_dt2t(w, indices, indptr, y, *, shape, transpose, events, backend=None):
    """``out[b, e] = w[b, e] * y[b, row(e)]`` (``y[b, indices[e]]`` when ``transpose``), on checked operands.

    ``w``: ``(batch, nnz)``; ``y``: ``(batch, size)``; ``indptr`` repaired;
    an event ``y`` (bool) selects ``w``.
    """
    if 0 in w.shape or 0 in y.shape:  # nothing to read: every entry is 0
        return jax.numpy.zeros(w.shape, w.dtype)
    out = jax.ShapeDtypeStruct(w.shape, w.dtype)
    return _prim(w, indices, indptr, y, outs=(out,), backend=backend, shape=tuple(shape), transpose=transpose,
                 events=events)[0]


_prim = XLACustomKernel('csr_dt2t')
register_kernels(_prim, __package__, 'csr_dt2t', ('numba', 'warp', 'pallas'))
register_dt2t_rules(_prim, bind_dt2t)
