"""The ``csr_dt2t`` primitive: one value per stored entry, its weight times its row's (column's) ``y``.

The public functions (:mod:`.csrmv_dt2t`, :mod:`.csrmm_dt2t`, :mod:`.cscmv_dt2t`,
:mod:`.cscmm_dt2t`, :mod:`.fcnmv_dt2t`, :mod:`.fcnmm_dt2t`, and ``JITCMatrix.dt2t`` for the just-in-time matrices)
end here through :func:`per_entry`; FCN rows are CSR rows of fixed length,
and the just-in-time matrices are generated as CSR.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from eventjax.kernels.common.checks import is_concrete
from eventjax.kernels.common.operator import Declaration
from eventjax.kernels.common.units import attach, split_product
from eventjax.kernels.dt2t.arguments import check_dt2t_call
from eventjax.kernels.dt2t.rules import DT2T_OPERANDS, register_dt2t_rules

__all__ = ['bind_dt2t', 'per_entry']


def per_entry(who, y, w, indices, indptr, *, shape, transpose, matrix, backend, validate):
    """Check, bind ``csr_dt2t`` and shape the result (``(nnz,)``, or ``(batch, nnz)`` when ``matrix``)."""
    w, y, unit = split_product(w, y)
    w, indices, indptr, y, events, shape = check_dt2t_call(
        who, w, indices, indptr, y, shape=shape, transpose=transpose, matrix=matrix, validate=validate)
    out = bind_dt2t(w, indices, indptr, y, shape=shape, transpose=transpose, events=events, backend=backend)
    if not transpose and not (validate and is_concrete(indices)):
        # Read by row, an entry never looks at its column; one outside [0, n) is dropped here, for every
        # backend at once, and the select gives it a zero gradient in w and y.
        keep = (indices >= 0) & (indices < shape[1])
        out = jnp.where(keep[None, :], out, jnp.zeros((), out.dtype))
    return attach(out if matrix else out[0], unit)


def bind_dt2t(w, indices, indptr, y, *, shape, transpose, events, backend=None):
    """``out[b, e] = w[b, e] * y[b, row(e)]`` (``y[b, indices[e]]`` when ``transpose``), on checked operands.

    ``w``: ``(batch, nnz)``; ``y``: ``(batch, size)``; ``indptr`` repaired;
    an event ``y`` (bool) selects ``w``.
    """
    if 0 in w.shape or 0 in y.shape:  # nothing to read: every entry is 0
        return jnp.zeros(w.shape, w.dtype)
    return _csr_dt2t.bind(w, indices, indptr, y, backend=backend, shape=tuple(shape), transpose=transpose,
                          events=events)


def _out(w, *rest, **static):
    return jax.ShapeDtypeStruct(w.shape, w.dtype)


_csr_dt2t = Declaration('csr_dt2t', __package__, DT2T_OPERANDS, out=_out,
                        rules=lambda declaration: register_dt2t_rules(declaration.primitive, bind_dt2t),
                        kernels=('numba', 'warp', 'pallas'))
