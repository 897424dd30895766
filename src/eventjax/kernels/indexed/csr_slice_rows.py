"""``csr_slice_rows``: chosen rows of a CSR matrix as a dense block, differentiable in the weights."""

from __future__ import annotations

import jax
import jax.numpy as jnp

from eventjax.kernels.common.narrowing import host_integers
from eventjax.kernels.common.operator import Declaration
from eventjax.kernels.common.units import weights_carry_the_unit
from eventjax.kernels.indexed import reference
from eventjax.kernels.indexed.arguments import check_structure, narrow_index_list
from eventjax.kernels.indexed.rules import linear_in_data

__all__ = ['csr_slice_rows']

OPERANDS = ('data', 'indices', 'indptr', 'rows')


@weights_carry_the_unit
def csr_slice_rows(data, indices, indptr, row_indices, *, shape, backend=None, validate=True):
    """Rows ``row_indices`` of a CSR matrix ``A`` (``shape=(m, n)``) as a dense ``(len(row_indices), n)`` block.

    Entries of one row that share a column add up; a row index outside
    ``[0, m)`` gives a row of zeros; a scalar ``row_indices`` gives one row
    of length ``n``. Only the chosen rows are read (the cost is their
    entries plus the output). The derivative with respect to ``data`` is
    the cotangent at each entry's position; ``vmap`` runs one call per element.

    Args:
        data, indices, indptr, shape, backend: as in :func:`csrmv`.
        row_indices: int scalar or 1-D int array of rows.
        validate: check concrete structure by value (False: trusted; rows are
            then read within the stored entries whatever ``indptr`` holds).

    Returns:
        ``(len(row_indices), n)`` (or ``(n,)``) in ``data``'s dtype.

    Example:
        >>> import jax.numpy as jnp
        >>> import eventjax as ej
        >>> data, indices, indptr = jnp.array([1., 2., 3.]), jnp.array([0, 1, 1]), jnp.array([0, 2, 3])
        >>> ej.csr_slice_rows(data, indices, indptr, jnp.array([1, 0]), shape=(2, 2))
        Array([[0., 3.],
               [1., 2.]], dtype=float32)
    """
    who = 'csr_slice_rows()'
    data, indices, indptr, (m, n) = check_structure(who, data, indices, indptr, shape=shape, validate=validate)
    scalar = jnp.ndim(row_indices) == 0
    wide = host_integers(row_indices)
    rows = narrow_index_list(who, 'row_indices', (jnp.asarray(row_indices) if wide is None else wide).reshape(-1), m)
    if min(m, n, indices.shape[0], rows.shape[0]) == 0:
        y = jnp.zeros((rows.shape[0], n), data.dtype)
    else:
        # float16 sums run in float32 on every backend.
        wide = data.astype(jnp.float32) if data.dtype == jnp.float16 else data
        y = _csr_slice_rows.bind(wide, indices, indptr, rows, shape=(m, n), backend=backend).astype(data.dtype)
    return y[0] if scalar else y


def _out(data, indices, indptr, rows, *, shape):
    return jax.ShapeDtypeStruct((rows.shape[0], shape[1]), data.dtype)


def _cotangent(ct, n_weights, indices, indptr, rows, *, shape):
    return reference.slice_cotangent(ct, n_weights, indices, indptr, rows, shape=shape)


_csr_slice_rows = Declaration('csr_slice_rows', __package__, OPERANDS, out=_out, rules=linear_in_data(_cotangent),
                              kernels=('numba', 'warp', 'pallas'))
