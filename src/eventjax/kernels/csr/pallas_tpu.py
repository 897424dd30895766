"""TPU (Mosaic) kernels of the CSR family: ``binary_csrmv/mm`` and ``csrmv/mm``.

Each generator ``kg(*, shape, transpose, outs)`` returns ``call(data, indices,
indptr, x, *, interpret)``, the form :mod:`eventjax.backends.pallas` expects;
:mod:`eventjax.kernels.csr.pallas_impl` names them ``<operator>_tpu_kernel``.
A matrix ``x`` runs column by column.

- ``transpose=True`` visits only the rows of the events (every row of a float
  product): the entries, laid out 128 to a row, are fetched two aligned rows
  at a time by DMAs driven by the row ids, rotated into one 128-lane window
  from the row's start, and added into the result as one-hot products on the
  MXU (see :mod:`eventjax.kernels.common.pallas.tpu_rows`). A matrix with a
  row of more than 128 entries runs with its rows cut into pieces of at most
  128 entries (each piece an event where its row is); more than 65,536 rows
  (or pieces) run in blocks of rows, one program each, so that SMEM keeps
  libtpu's own scalars. Rows that all hold the same number ``k < 128`` of
  entries are cut to ``k`` lanes and go through the MXU side by side; a
  matrix of ``m * k`` entries on rows of unequal length runs as pieces.
  Entries that fill whole 128-wide rows are read in place; other counts are
  padded to whole rows, a copy.
- ``transpose=False`` runs the FCN gather kernel when every row holds the same
  number of entries (a CSR matrix made from a fixed-connection one), else
  picks each entry's term the same way from the entries as stored and sums
  each row's terms by a running sum that restarts at each row
  (:mod:`eventjax.kernels.csr.pallas_tpu_segments`).

A problem too large for the chip's on-core memories takes the ``jax`` kernel.
"""

from __future__ import annotations

import jax.numpy as jnp
from jax import lax

from eventjax.kernels.common.checks import running_sum
from eventjax.kernels.common.pallas.tpu_gather import fcn_gather
from eventjax.kernels.common.pallas.tpu_pieces import by_columns, in_pieces
from eventjax.kernels.common.pallas.tpu_rows import fits_the_chip, row_scatter
from eventjax.kernels.csr.jax_impl import _product
from eventjax.kernels.csr.pallas_tpu_segments import segment_gather

__all__ = ['binary_csrmv_tpu_kernel', 'csrmv_tpu_kernel']

_LANES = 128
# A row's entries must fit in one window of 128 lanes.
_LONGEST_ROW = _LANES


def _pieces(indptr, lengths, count):
    """Rows cut into pieces of at most 128 entries: each piece's row (``m`` past the last) and the
    ``count + 1`` starts of the pieces, which tile the entries in order as rows do."""
    m, nnz = lengths.shape[0], indptr[-1]
    per_row = jnp.maximum(1, (lengths + _LANES - 1) // _LANES)
    ends = running_sum(per_row)
    piece = jnp.arange(count, dtype=ends.dtype)
    row = jnp.searchsorted(ends, piece, side='right').astype(jnp.int32)
    clipped = jnp.minimum(row, m - 1)
    first = ends[clipped] - per_row[clipped]
    starts = jnp.where(row < m, indptr[clipped] + _LANES * (piece - first), nnz)
    return row, jnp.append(starts, nnz).astype(jnp.int32)


def _call(*, shape, transpose, out, events):
    m, n = shape

    def call(data, indices, indptr, x, *, interpret):
        nnz = indices.shape[0]
        if m == 0 or n == 0 or nnz == 0 or x.size == 0:
            return jnp.zeros(out.shape, out.dtype)
        homogeneous = data.shape == (1,) and nnz != 1
        lengths = indptr[1:] - indptr[:-1]

        k = nnz // m
        if not fits_the_chip(n=n, transpose=transpose, k=k):
            return _product(data, indices, indptr, x, shape=shape, transpose=transpose, out_dtype=out.dtype,
                            binary=events)

        def per_column(column):
            return lambda: by_columns(column, x)

        if transpose:
            # Entries filling whole 128-wide rows are read in place (a reshape); others are padded, a copy.
            rows = max(2, -(-nnz // _LANES))
            flat_idx = in_pieces(indices.astype(jnp.int32), -1, rows)
            weights = data.reshape(1, 1) if homogeneous else in_pieces(data, 0, rows)

            def scatter(v, starts, row_width=_LANES):
                return row_scatter(weights, flat_idx, v, n=n, events=events, out_dtype=out.dtype,
                                   interpret=interpret, starts=starts, row_width=row_width)

            def column(v):
                return scatter(v, indptr.astype(jnp.int32))

            def equal_column(v):
                return scatter(v, indptr.astype(jnp.int32), row_width=k)

            pieces = m + nnz // _LANES + 1

            def split_rows():
                row, starts = _pieces(indptr, lengths, pieces)

                def piece_column(v):  # each piece carries its row's event or value
                    return scatter(jnp.where(row < m, v[jnp.minimum(row, m - 1)], jnp.zeros((), v.dtype)), starts)

                return per_column(piece_column)()

            if nnz == m * k and k < _LANES:
                # Rows that may all hold k entries: packed k lanes apart when they do (fewer lanes through the
                # MXU than a row a 128-lane window), else as pieces, which serve rows of any length; a third
                # branch for rows of at most 128 would add a kernel to every compile.
                return lax.cond(jnp.all(lengths == k), per_column(equal_column), split_rows)
            return lax.cond(jnp.max(lengths) <= _LONGEST_ROW, per_column(column), split_rows)

        def segments(read_rows=True):
            return segment_gather(data, indices, indptr, x, n=n, events=events, out_dtype=out.dtype,
                                  interpret=interpret, read_rows=read_rows)

        if nnz != m * k:  # rows of unequal length, known from the shapes
            return segments()
        # Rows that may all hold k entries: the FCN gather when they do, else the running sums per row (a
        # kernel too: XLA's gather and scatter in this branch made a jitted loop of these products take 13 s
        # to compile for a TPU at 100,000 rows).
        w = data.reshape(1, 1) if homogeneous else data.reshape(m, k)
        idx = indices.reshape(m, k)
        # Viewing the flat entries as (m, k) is a copy on a TPU (rows of k < 128 lanes padded to 128): in
        # the branch, each product paid it (1.10 ms at 100,000 x 100 on the chip, the FCN gather of the same
        # rows 0.86). Made here, XLA hoists it out of a jitted loop whose connectivity does not change; the
        # barrier keeps XLA from sinking it into the branch, out of the hoist's reach.
        w, idx = lax.optimization_barrier((w, idx))

        def column(v):
            return fcn_gather(w, idx, v, n=n, events=events, out_dtype=out.dtype, interpret=interpret)

        return lax.cond(jnp.all(lengths == k), per_column(column), lambda: segments(read_rows=False))

    return call


def csrmv_tpu_kernel(*, shape, transpose, outs):
    """``A @ x`` (``x @ A`` when ``transpose``) for a float ``x`` on tpu; also serves ``csrmm``."""
    return _call(shape=shape, transpose=transpose, out=outs[0], events=False)


def binary_csrmv_tpu_kernel(*, shape, transpose, outs):
    """The same for events (``True`` or ``> 0``); also serves ``binary_csrmm``."""
    return _call(shape=shape, transpose=transpose, out=outs[0], events=True)
