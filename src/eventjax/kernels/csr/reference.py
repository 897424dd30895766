"""Pure-JAX CSR kernels: the oracle for every other backend, and the ``jax`` backend.

Each generator ``kg(*, shape, transpose, outs)`` returns ``f(data, indices,
indptr, x) -> (y,)``. Row ``i`` owns entries ``[indptr[i], indptr[i + 1])``;
the public functions hand over a valid or repaired ``indptr``. An entry
whose column index lies outside ``[0, n)`` or that belongs to no row is
dropped: it is never read or written and contributes nothing (negative
indices are not wrapped). Binary products select the weights of event
entries (a NaN weight without an event adds nothing); float products are
IEEE products over the stored entries.
"""

from __future__ import annotations

import jax.numpy as jnp

from eventjax.kernels.common import accumulation_dtype
from eventjax.kernels.common.checks import repair_indptr
from eventjax.kernels.common.eager import one_program_when_eager
from eventjax.kernels.common.events import product_kernels, stored_terms

__all__ = ['binary_csrmm_kernel', 'binary_csrmv_kernel', 'csrmm_kernel', 'csrmv_kernel', 'entry_rows', 'kept_entries']


def entry_rows(indptr, nnz: int):
    """The row of each of the ``nnz`` stored entries (``rows`` for entries past the end)."""
    return jnp.searchsorted(indptr, jnp.arange(nnz, dtype=indptr.dtype), side='right') - 1


def _entries(indices, indptr, shape):
    """``(rows, kept)``: each entry's row and whether it is kept (has a row and a column in range)."""
    m, n = shape
    rows = entry_rows(indptr, indices.shape[0])
    kept = (rows >= 0) & (rows < m) & (indices >= 0) & (indices < n)
    return rows, kept


def kept_entries(indices, indptr, shape):
    """``(rows, kept)`` of unchecked structure, by the products' rules: the row of each entry
    under the repaired ``indptr``, and whether the entry counts (has a row and a column in ``[0, n)``).

    Conversions (``todense``, ``tocoo``) use it so that they drop what the products drop.

    Example:
        >>> rows, kept = kept_entries(jnp.array([0, -1, 1]), jnp.array([0, 2, 2]), (2, 2))
        >>> kept.tolist()
        [True, False, False]
    """
    return _kept_entries(indices, indptr, tuple(int(d) for d in shape))


@one_program_when_eager(2)  # eager conversions (todense, tocoo) compile one program, not a dozen
def _kept_entries(indices, indptr, shape):
    return _entries(indices, repair_indptr(indptr, indices.shape[0]), shape)


def _product(data, indices, indptr, x, *, shape, transpose, out_dtype, binary):
    m, n = shape
    acc = accumulation_dtype(out_dtype)
    out_shape = (n if transpose else m,) + x.shape[1:]
    if x.shape[0] == 0 or indices.shape[0] == 0 or m == 0 or n == 0:
        return jnp.zeros(out_shape, out_dtype)
    rows, kept = _entries(indices, indptr, shape)
    src, dst = (rows, indices) if transpose else (indices, rows)
    # Dropped entries read x[0] (then discarded) and write past the end,
    # where the scatter drops them; a negative index would otherwise wrap.
    xs = x[jnp.where(kept, src, 0)]
    dst = jnp.where(kept, dst, out_shape[0])
    # Homogeneous data, shape (1,), broadcasts against every entry.
    w = data.astype(acc)
    if x.ndim == 2:
        w, kept = w[:, None], kept[:, None]
    contrib = jnp.broadcast_to(stored_terms(w, xs, kept, binary=binary, acc=acc), (indices.shape[0],) + x.shape[1:])
    y = jnp.zeros(out_shape, acc).at[dst].add(contrib, mode='drop')
    return y.astype(out_dtype)


# ``A @ x`` (or ``x @ A``), float and event ``x``; the mm kernels are the same functions (2-D ``x``).
csrmv_kernel, binary_csrmv_kernel = product_kernels(_product)
csrmm_kernel = csrmv_kernel
binary_csrmm_kernel = binary_csrmv_kernel


def entry_cotangent(ct, x, indices, indptr, *, shape, transpose):
    """The cotangent of each stored weight: ``ct[row] * x[col]`` (swapped when transposed).

    With a matrix ``x`` the products are summed over its columns. Entries
    that are dropped (no row, or a column outside ``[0, n)``) get 0,
    the same drop rule as the products.
    """
    m, n = shape
    nnz = indices.shape[0]
    if nnz == 0 or m == 0 or n == 0:
        return jnp.zeros((nnz,), ct.dtype)
    rows, valid = kept_entries(indices, indptr, shape)
    rows, cols = jnp.where(valid, rows, 0), jnp.where(valid, indices, 0)
    out_idx, in_idx = (cols, rows) if transpose else (rows, cols)
    prod = ct[out_idx] * x[in_idx]
    if prod.ndim == 2:
        prod = prod.sum(axis=1)
    return jnp.where(valid, prod, jnp.zeros((), prod.dtype))
