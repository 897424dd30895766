"""The readable pure-JAX oracle of the index-list products, and the weights' cotangent.

Entry ``k`` of row ``r`` (``indptr[r] <= k < indptr[r + 1]``) has column
``c = indices[k]`` and weight ``data[perm[k]]`` (``data[k]`` without a
permutation, ``data[0]`` for a homogeneous weight). An index listed ``t``
times among the first ``min(count, len(ids))`` slots carries ``t`` events.
``transpose=True`` adds ``t(r) * w`` into ``y[c]``; ``transpose=False`` adds
``t(c) * w`` into ``y[r]``; an entry without events adds nothing whatever
its weight (a select). Columns outside ``[0, n)``, list entries outside the
event side and permutation entries outside ``data`` drop their entries.
This oracle touches every stored entry; ``jax_impl.py`` does not.
"""

from __future__ import annotations

import jax.numpy as jnp

from eventjax.kernels.common import accumulation_dtype

__all__ = ['binary_csrmm_indexed_kernel', 'binary_csrmv_indexed_kernel', 'csr_slice_rows_kernel', 'entry_terms',
           'event_multiplicity', 'mm_product', 'mm_weight_cotangent', 'product', 'slice_cotangent', 'slice_entries',
           'weight_cotangent']


def event_multiplicity(ids, count, size: int, dtype=jnp.int32):
    """How many times each of ``size`` indices is listed among the live slots of ``ids``.

    Example:
        >>> event_multiplicity(jnp.array([2, 0, 2, 9]), jnp.array([3]), 3)
        Array([1, 0, 2], dtype=int32)
    """
    count = jnp.reshape(count, ())
    live = (jnp.arange(ids.shape[0], dtype=count.dtype) < count) & (ids >= 0) & (ids < size)
    return jnp.zeros((size,), dtype).at[jnp.where(live, ids, size)].add(jnp.ones((), dtype), mode='drop')


def entry_terms(data, indices, indptr, perm, ids, count, *, shape, transpose, acc):
    """Per stored entry: ``(out_index, weight, events, kept)``; ``out_index`` is where the term lands."""
    m, n = shape
    nnz = indices.shape[0]
    k = jnp.arange(nnz, dtype=indptr.dtype)
    rows = jnp.searchsorted(indptr, k, side='right').astype(indptr.dtype) - 1
    kept = (rows >= 0) & (rows < m) & (indices >= 0) & (indices < n)
    pos = perm if perm.shape[0] else k
    homogeneous = data.shape[0] == 1
    if not homogeneous:
        kept &= (pos >= 0) & (pos < data.shape[0])
    w = jnp.broadcast_to(data[0], (nnz,)) if homogeneous else data[jnp.clip(pos, 0, data.shape[0] - 1)]
    mult = event_multiplicity(ids, count, m if transpose else n)
    src, dst = (rows, indices) if transpose else (indices, rows)
    events = mult[jnp.clip(src, 0, mult.shape[0] - 1)] if mult.shape[0] else jnp.zeros((nnz,), jnp.int32)
    return dst, w.astype(acc), events, kept


def product(data, indices, indptr, perm, ids, count, *, shape, transpose, out_dtype):
    """The product over every stored entry (``transpose=False``: the events are columns, every row is read)."""
    m, n = shape
    acc = accumulation_dtype(out_dtype)
    size = n if transpose else m
    if indices.shape[0] == 0 or m == 0 or n == 0:
        return jnp.zeros((size,), out_dtype)
    dst, w, events, kept = entry_terms(data, indices, indptr, perm, ids, count, shape=shape,
                                       transpose=transpose, acc=acc)
    terms = jnp.where(kept & (events > 0), w * events.astype(acc), jnp.zeros((), acc))
    return jnp.zeros((size,), acc).at[jnp.where(kept, dst, size)].add(terms, mode='drop').astype(out_dtype)


def binary_csrmv_indexed_kernel(*, shape, permuted, outs):
    """The oracle as a ``jax`` kernel generator (the primitive's events are rows: ``transpose=True``)."""
    def kernel(data, indices, indptr, perm, ids, count):
        y = product(data, indices, indptr, perm if permuted else perm[:0], ids, count, shape=shape,
                    transpose=True, out_dtype=outs[0].dtype)
        return (jnp.where(count[0] > ids.shape[0], jnp.array(jnp.nan, y.dtype), y),)  # overflow: NaN
    return kernel


def _entry_events(events, B, src, acc):
    """``(nnz, k)``: entry ``k``'s multiplicity times the event indicator of row ``src[k]`` of ``B``."""
    rows = jnp.clip(src, 0, B.shape[0] - 1)
    mask = B[rows] if B.dtype == jnp.bool_ else B[rows] > 0
    return jnp.where(mask, events[:, None].astype(acc), jnp.zeros((), acc))


def mm_product(data, indices, indptr, perm, ids, count, B, *, shape, transpose, out_dtype):
    """The matrix product over every stored entry: row ``i`` of ``B`` counts where ``i`` is listed.

    ``B`` is ``(m, k)`` (``transpose``) or ``(n, k)``; the result ``(n, k)`` or ``(m, k)``.
    """
    m, n = shape
    acc = accumulation_dtype(out_dtype)
    size, k = (n if transpose else m), B.shape[1]
    if indices.shape[0] == 0 or m == 0 or n == 0 or k == 0:
        return jnp.zeros((size, k), out_dtype)
    dst, w, events, kept = entry_terms(data, indices, indptr, perm, ids, count, shape=shape,
                                       transpose=transpose, acc=acc)
    src = (jnp.searchsorted(indptr, jnp.arange(indices.shape[0], dtype=indptr.dtype), side='right') - 1
           if transpose else indices)
    ev = _entry_events(events, B, src, acc)
    terms = jnp.where((kept[:, None]) & (ev != 0), w[:, None] * ev, jnp.zeros((), acc))
    return jnp.zeros((size, k), acc).at[jnp.where(kept, dst, size)].add(terms, mode='drop').astype(out_dtype)


def binary_csrmm_indexed_kernel(*, shape, permuted, outs):
    """The matrix oracle as a ``jax`` kernel generator (events are rows: ``transpose=True``)."""
    def kernel(data, indices, indptr, perm, ids, count, B):
        y = mm_product(data, indices, indptr, perm if permuted else perm[:0], ids, count, B, shape=shape,
                       transpose=True, out_dtype=outs[0].dtype)
        return (jnp.where(count[0] > ids.shape[0], jnp.array(jnp.nan, y.dtype), y),)  # overflow: NaN
    return kernel


def mm_weight_cotangent(ct, n_weights: int, indices, indptr, perm, ids, count, B, *, shape, transpose):
    """The cotangent of the weights of the matrix product: ``sum_c ct[out(k), c] * events(k, c)`` per entry."""
    m, n = shape
    nnz = indices.shape[0]
    if nnz == 0 or m == 0 or n == 0 or B.shape[1] == 0:
        return jnp.zeros((n_weights,), ct.dtype)
    data = jnp.zeros((n_weights,), ct.dtype)
    dst, _, events, kept = entry_terms(data, indices, indptr, perm, ids, count, shape=shape,
                                       transpose=transpose, acc=ct.dtype)
    src = (jnp.searchsorted(indptr, jnp.arange(nnz, dtype=indptr.dtype), side='right') - 1
           if transpose else indices)
    ev = _entry_events(events, B, src, ct.dtype)
    term = jnp.where(kept, jnp.sum(ct[jnp.where(kept, dst, 0)] * ev, axis=1), jnp.zeros((), ct.dtype))
    if n_weights == 1:
        return term.sum().reshape(1)
    pos = perm if perm.shape[0] else jnp.arange(nnz)
    return jnp.zeros((n_weights,), ct.dtype).at[jnp.where(kept, pos, n_weights)].add(term, mode='drop')


def weight_cotangent(ct, n_weights: int, indices, indptr, perm, ids, count, *, shape, transpose):
    """The cotangent of the ``n_weights`` weights: ``ct[out(k)] * events(k)`` summed into each entry's weight."""
    m, n = shape
    nnz = indices.shape[0]
    if nnz == 0 or m == 0 or n == 0:
        return jnp.zeros((n_weights,), ct.dtype)
    data = jnp.zeros((n_weights,), ct.dtype)  # only its length matters to entry_terms
    dst, _, events, kept = entry_terms(data, indices, indptr, perm, ids, count, shape=shape,
                                       transpose=transpose, acc=ct.dtype)
    term = jnp.where(kept, ct[jnp.where(kept, dst, 0)] * events.astype(ct.dtype), jnp.zeros((), ct.dtype))
    if n_weights == 1:
        return term.sum().reshape(1)
    pos = perm if perm.shape[0] else jnp.arange(nnz)
    return jnp.zeros((n_weights,), ct.dtype).at[jnp.where(kept, pos, n_weights)].add(term, mode='drop')


def slice_entries(indices, indptr, rows, *, shape):
    """Per (slot, stored entry): whether the entry is in the slot's row and its column is kept, as ``(k, nnz)``.

    The oracle of :func:`csr_slice_rows`: ``k x nnz`` work, for small problems.
    """
    m, n = shape
    nnz = indices.shape[0]
    pos = jnp.arange(nnz, dtype=indptr.dtype)
    r = jnp.clip(rows, 0, m - 1)
    start = jnp.clip(indptr[r], 0, nnz)
    end = jnp.clip(indptr[r + 1], start, nnz)
    live = ((rows >= 0) & (rows < m))[:, None]
    return live & (pos >= start[:, None]) & (pos < end[:, None]) & ((indices >= 0) & (indices < n))[None, :]


def csr_slice_rows_kernel(*, shape, outs):
    """The oracle of ``csr_slice_rows`` as a ``jax`` kernel generator."""
    def kernel(data, indices, indptr, rows):
        m, n = shape
        acc = accumulation_dtype(outs[0].dtype)
        inside = slice_entries(indices, indptr, rows, shape=shape)
        w = jnp.broadcast_to(data.astype(acc), (indices.shape[0],)) if data.shape[0] == 1 else data.astype(acc)
        cols = jnp.where(inside, indices[None, :], n)
        flat = (jnp.arange(rows.shape[0], dtype=cols.dtype)[:, None] * n + cols).reshape(-1)
        flat = jnp.where(cols.reshape(-1) < n, flat, rows.shape[0] * n)
        terms = jnp.where(inside, w[None, :], jnp.zeros((), acc)).reshape(-1)
        y = jnp.zeros((rows.shape[0] * n,), acc).at[flat].add(terms, mode='drop')
        return (y.reshape(rows.shape[0], n).astype(outs[0].dtype),)
    return kernel


def slice_cotangent(ct, n_weights: int, indices, indptr, rows, *, shape):
    """The cotangent of the weights of :func:`csr_slice_rows`: ``ct[slot, indices[k]]`` summed over slots."""
    n = shape[1]
    inside = slice_entries(indices, indptr, rows, shape=shape)
    picked = ct[:, jnp.clip(indices, 0, n - 1)]
    term = jnp.where(inside, picked, jnp.zeros((), ct.dtype)).sum(axis=0)
    return term.sum().reshape(1) if n_weights == 1 else term
