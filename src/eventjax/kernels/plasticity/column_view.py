"""``csr_column_view``: the column view of a CSR structure, which on-post updates walk column by column."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np

from eventjax.kernels.common.checks import is_concrete
from eventjax.kernels.plasticity.arguments import check_csr_structure, check_shape
from eventjax.kernels.plasticity.reference import entry_rows

__all__ = ['csr_column_view']


def csr_column_view(indices, indptr, *, shape, validate=True):
    """The CSC order of a CSR structure plus where each entry sits in the CSR data.

    Returns ``(rows, col_indptr, weight_indices)``: for column ``j``, the
    entries ``c`` in ``[col_indptr[j], col_indptr[j + 1])`` have row
    ``rows[c]`` and weight ``data[weight_indices[c]]`` (entries keep their
    CSR order within a column). Built once per structure (on NumPy arrays
    when the structure is concrete, else in JAX); :class:`eventjax.CSR`
    caches it. Entries that belong to no row, or whose column is out of
    range, are left out of every column.

    Example:
        >>> import numpy as np
        >>> rows, ptr, pos = csr_column_view(np.array([1, 0, 1]), np.array([0, 2, 3]), shape=(2, 2))
        >>> rows.tolist(), ptr.tolist(), pos.tolist()
        ([0, 0, 1], [0, 1, 3], [1, 0, 2])
    """
    who = 'csr_column_view()'
    m, n = check_shape(who, shape)
    indices, indptr = check_csr_structure(who, indices, indptr, m, n, validate)
    nnz = indices.shape[0]
    if is_concrete(indices, indptr):
        idx, ptr = np.asarray(indices), np.asarray(indptr)
        row_of = np.repeat(np.arange(m, dtype=idx.dtype), np.diff(ptr))
        cols = np.full(nnz, n, idx.dtype)
        used = slice(int(ptr[0]) if m else 0, int(ptr[-1]) if m else 0)
        cols[used] = np.where((idx[used] >= 0) & (idx[used] < n), idx[used], n)
        rows = np.zeros(nnz, idx.dtype)
        rows[used] = row_of
        order = np.argsort(cols, kind='stable').astype(idx.dtype)
        col_ptr = np.searchsorted(cols[order], np.arange(n + 1), side='left').astype(idx.dtype)
        return jnp.asarray(rows[order]), jnp.asarray(col_ptr), jnp.asarray(order)
    rows = entry_rows(indptr, nnz)
    cols = jnp.where((rows >= 0) & (indices >= 0) & (indices < n), indices, n)
    order = jnp.argsort(cols, stable=True).astype(indices.dtype)
    col_ptr = jnp.searchsorted(cols[order], jnp.arange(n + 1, dtype=indices.dtype), side='left')
    return jnp.maximum(rows[order], 0), col_ptr.astype(indices.dtype), order
