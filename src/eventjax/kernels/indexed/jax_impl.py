"""The ``jax`` backend of the index-list product: event-driven (the events are rows).

The kernel (the events are rows of the CSR structure) visits only
the listed rows: a ``(capacity, width)`` block of their entries, ``width``
a static bound a little above the mean row length (1.25x, a multiple of 8);
when a listed row is longer the call falls back to the oracle, which
touches every stored entry (``lax.cond``: the branch taken costs). The
result is the oracle's (``reference.py``).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from eventjax.kernels.common import accumulation_dtype, compaction
from eventjax.kernels.indexed import packed_reference, reference

__all__ = ['binary_csrmm_indexed_kernel', 'binary_csrmv_indexed_kernel', 'binary_csrmv_packed_kernel',
           'csr_slice_rows_kernel', 'row_block', 'row_width']


def row_width(nnz: int, m: int) -> int:
    """The static width of the visited block: 1.25x the mean row length, rounded up to a multiple of 8.

    Example:
        >>> row_width(10_000_000, 100_000)
        128
    """
    mean = -(-nnz // max(m, 1))
    return max(8, -(-(5 * mean) // 32) * 8)


def row_block(data, indices, indptr, perm, rows, live, *, n, acc):
    """The entries of ``rows`` (where ``live``) as a ``(len(rows), width)`` block: ``(cols, weights, ok, fits)``.

    ``fits`` (traced) is False when a row is longer than the static width;
    the caller then needs another path. Weights of entries not ``ok`` are 0.
    """
    nnz = indices.shape[0]
    width = row_width(nnz, indptr.shape[0] - 1)
    r = jnp.where(live, rows, 0)
    start = jnp.clip(indptr[r], 0, nnz)
    end = jnp.where(live, jnp.clip(indptr[r + 1], start, nnz), start)
    k = start[:, None] + jnp.arange(width, dtype=start.dtype)
    ok = k < end[:, None]
    k = jnp.where(ok, k, 0)
    cols = indices[k]
    ok &= (cols >= 0) & (cols < n)
    if data.shape[0] == 1:
        w = jnp.broadcast_to(data[0].astype(acc), k.shape)
    else:
        pos = perm[k] if perm.shape[0] else k
        ok &= (pos >= 0) & (pos < data.shape[0])
        w = data[jnp.clip(pos, 0, data.shape[0] - 1)].astype(acc)
    return cols, jnp.where(ok, w, jnp.zeros((), acc)), ok, jnp.max(end - start, initial=0) <= width


def _listed_rows(data, indices, indptr, perm, ids, count, *, shape, acc):
    m, n = shape
    live = (jnp.arange(ids.shape[0], dtype=count.dtype) < count.reshape(())) & (ids >= 0) & (ids < m)
    cols, w, ok, fits = row_block(data, indices, indptr, perm, ids, live, n=n, acc=acc)

    def block():
        return jnp.zeros((n,), acc).at[jnp.where(ok, cols, n)].add(w, mode='drop')

    def everything():
        return reference.product(data, indices, indptr, perm, ids, count, shape=shape, transpose=True,
                                  out_dtype=acc)

    return jax.lax.cond(fits, block, everything)


def binary_csrmv_indexed_kernel(*, shape, permuted, outs):
    """``jax`` kernel generator: the listed rows only."""
    out_dtype = outs[0].dtype

    def kernel(data, indices, indptr, perm, ids, count):
        perm = perm if permuted else perm[:0]  # the primitive's unread placeholder
        acc = accumulation_dtype(out_dtype)
        y = _listed_rows(data, indices, indptr, perm, ids, count, shape=shape, acc=acc).astype(out_dtype)
        return (jnp.where(count[0] > ids.shape[0], jnp.array(jnp.nan, out_dtype), y),)  # overflow: NaN

    return kernel


def binary_csrmm_indexed_kernel(*, shape, permuted, outs):
    """``jax`` kernel generator of the matrix product: the listed rows only, ``(capacity, width, k)`` terms."""
    m, n = shape
    out_dtype = outs[0].dtype

    def kernel(data, indices, indptr, perm, ids, count, B):
        perm = perm if permuted else perm[:0]
        acc = accumulation_dtype(out_dtype)
        k = B.shape[1]
        live = (jnp.arange(ids.shape[0]) < count[0]) & (ids >= 0) & (ids < m)
        cols, w, ok, fits = row_block(data, indices, indptr, perm, ids, live, n=n, acc=acc)
        rows = B[jnp.where(live, ids, 0)]
        ev = jnp.where(live[:, None] & (rows if rows.dtype == jnp.bool_ else rows > 0), jnp.ones((), acc),
                       jnp.zeros((), acc))

        def block():
            terms = jnp.where(ok[:, :, None] & (ev[:, None, :] != 0), w[:, :, None] * ev[:, None, :],
                              jnp.zeros((), acc))
            flat = jnp.where(ok, cols, n).reshape(-1)
            return jnp.zeros((n, k), acc).at[flat].add(terms.reshape(-1, k), mode='drop')

        def everything():
            return reference.mm_product(data, indices, indptr, perm, ids, count[0], B, shape=shape, transpose=True,
                                        out_dtype=acc)

        y = jax.lax.cond(fits, block, everything).astype(out_dtype)
        return (jnp.where(count[0] > ids.shape[0], jnp.array(jnp.nan, out_dtype), y),)

    return kernel


def csr_slice_rows_kernel(*, shape, outs):
    """``jax`` kernel generator of ``csr_slice_rows``: a ``(rows, width)`` block, the oracle for longer rows."""
    m, n = shape
    out = outs[0]
    oracle = reference.csr_slice_rows_kernel(shape=shape, outs=outs)

    def kernel(data, indices, indptr, rows):
        k = rows.shape[0]
        acc = accumulation_dtype(out.dtype)
        live = (rows >= 0) & (rows < m)
        cols, w, ok, fits = row_block(data, indices, indptr, data[:0].astype(jnp.int32), rows, live, n=n, acc=acc)

        def block():
            flat = jnp.where(ok, jnp.arange(k, dtype=cols.dtype)[:, None] * n + cols, k * n)
            y = jnp.zeros((k * n,), acc).at[flat.reshape(-1)].add(w.reshape(-1), mode='drop')
            return y.reshape(k, n).astype(out.dtype)

        return (jax.lax.cond(fits, block, lambda: oracle(data, indices, indptr, rows)[0]),)

    return kernel


def binary_csrmv_packed_kernel(*, shape, fixed, transpose, outs):
    """``jax`` kernel generator of the bit-packed product: unpack with vectorized shifts, then a bool product.

    Unpacking reads the ``ceil(size / 32)`` words once (32 shifts each,
    O(size)). With ``transpose`` the set bits are compacted
    (``by_event_count``) and only their rows are visited, as in the
    index-list product. Without it every row sums its own entries in a
    padded ``(m, width)`` block (a reshape when all rows are as long: FCN
    matrices, uniform CSR rows), so no entry is scattered; a row longer
    than the width falls back to the oracle. (Testing one bit per entry
    and summing rows by segment, a ``jnp.repeat`` of row ids then a
    scatter, measured 4-9x slower than the bool product.)
    """
    m, n = shape
    out_dtype = outs[0].dtype

    def kernel(data, indices, indptr, words, sizes):
        acc = accumulation_dtype(out_dtype)
        nnz = indices.shape[0]
        if fixed:
            indptr = jnp.minimum(jnp.arange(m + 1, dtype=indices.dtype) * fixed, nnz)

        def everything():
            return packed_reference.binary_csrmv_packed_kernel(
                shape=shape, fixed=fixed, transpose=transpose, outs=(jax.ShapeDtypeStruct(outs[0].shape, acc),))(
                data, indices, indptr, words, sizes)[0]

        if transpose:
            none = indices[:0]

            def listed(ids):
                return _listed_rows(data, indices, indptr, none, ids, jnp.array([ids.shape[0]], jnp.int32),
                                    shape=shape, acc=acc)

            y = compaction.by_event_count(packed_reference.bits(words, m), listed, everything)
            return (y.astype(out_dtype),)
        ev = packed_reference.bits(words, n)

        def row_sums(cols, w, ok):
            return jnp.where(ok & ev[jnp.where(ok, cols, 0)], w, jnp.zeros((), acc)).sum(axis=1)

        def uniform():
            cols = indices.reshape(m, -1)
            w = data.astype(acc)
            w = jnp.broadcast_to(w[0], cols.shape) if w.shape[0] == 1 else w.reshape(cols.shape)
            return row_sums(cols, w, (cols >= 0) & (cols < n))

        if fixed:  # every row holds `fixed` entries: statically uniform
            return (uniform().astype(out_dtype),)
        rows = jnp.arange(m, dtype=indptr.dtype)

        def padded():
            cols, w, ok, _ = row_block(data, indices, indptr, indices[:0], rows, rows >= 0, n=n, acc=acc)
            return row_sums(cols, w, ok)

        branches = [everything, padded]
        which = (jnp.max(jnp.diff(indptr), initial=0) <= row_width(nnz, m)).astype(jnp.int32)
        if nnz % m == 0:
            is_uniform = (indptr[0] == 0) & jnp.all(jnp.diff(indptr) == nnz // m)
            branches.append(uniform)
            which = jnp.where(is_uniform, 2, which)
        return (jax.lax.switch(which, branches).astype(out_dtype),)

    return kernel
