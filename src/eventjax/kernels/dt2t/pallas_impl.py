"""Pallas kernels (gpu, Triton lowering) of the per-synapse products: one program per block of rows.

The batch travels as columns (``w``, ``y`` and the output transposed to
``(entries, batch)``, the batch padded to a power of 2 as Triton wants);
each row loops over its entries and stores one short vector per entry, so
no two programs write one place and no atomics are needed. An event ``y``
becomes 0/1 before the kernel and the kernel selects ``w`` where it is 1.
There is no TPU kernel (see :data:`TPU_UNSUPPORTED`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

from eventjax.kernels.common.events import accumulation_dtype
from eventjax.kernels.common.pallas.rows import triton_params

__all__ = ['TPU_UNSUPPORTED', 'csr_dt2t_kernel', 'csr_sddmm_kernel']

TPU_UNSUPPORTED = ('Per-synapse products read y (or b) at data-dependent columns; Mosaic (TPU) has no vector '
                   "gathers from VMEM. Use backend='jax' on tpu.")
_ROWS_PER_PROGRAM = 8


def _pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _rows(m, body_of_row):
    def rows(*refs):
        base = pl.program_id(0) * _ROWS_PER_PROGRAM

        def row(r, carry):
            i = base + r

            @pl.when(i < m)
            def _():
                body_of_row(i, *refs)
            return carry

        lax.fori_loop(0, _ROWS_PER_PROGRAM, row, 0)
    return rows


def _padded_columns(x, width):
    """``x`` (``(batch, size)``) as ``(size, width)`` columns, zero-padded."""
    return jnp.pad(x.T, ((0, 0), (0, width - x.shape[0])))


def csr_dt2t_kernel(*, shape, transpose, events, outs):
    """``call(w, indices, indptr, y, *, interpret)`` for the pallas bridge."""
    m, n = shape
    out = outs[0]

    def body_of_row(i, w_ref, indices_ref, indptr_ref, y_ref, out_ref):
        yi = y_ref[i, :]

        def entry(k, carry):
            if transpose:
                j = indices_ref[k]
                ok = (j >= 0) & (j < n)
                y = jnp.where(ok, y_ref[jnp.where(ok, j, 0), :], jnp.zeros((), y_ref.dtype))
            else:
                y = yi
            w = w_ref[k, :]
            out_ref[k, :] = jnp.where(y > 0, w, jnp.zeros((), w.dtype)) if events else w * y
            return carry

        lax.fori_loop(indptr_ref[i], indptr_ref[i + 1], entry, 0)

    def call(w, indices, indptr, y, *, interpret):
        batch, nnz = w.shape
        if m == 0 or nnz == 0 or batch == 0:
            return jnp.zeros(out.shape, out.dtype)
        width = _pow2(batch)
        yv = _padded_columns(y.astype(w.dtype), width)
        res = pl.pallas_call(
            _rows(m, body_of_row), out_shape=jax.ShapeDtypeStruct((nnz, width), w.dtype),
            grid=(pl.cdiv(m, _ROWS_PER_PROGRAM),), interpret=interpret, compiler_params=triton_params(),
        )(_padded_columns(w, width), indices, indptr, yv)
        # Entries of no row were never written: zero them here.
        k = jnp.arange(nnz)
        live = (k >= indptr[0]) & (k < indptr[-1])
        return jnp.where(live[None, :], res[:, :batch].T, jnp.zeros((), out.dtype)).astype(out.dtype)

    return call


def csr_sddmm_kernel(*, shape, outs):
    """``call(a, bt, indices, indptr, *, interpret)`` for the pallas bridge (``bt``: ``b`` transposed)."""
    m, n = shape
    out = outs[0]
    acc = accumulation_dtype(out.dtype)

    def body_of_row(i, a_ref, bt_ref, indices_ref, indptr_ref, out_ref):
        ai = a_ref[i, :]

        def entry(k, carry):
            j = indices_ref[k]
            ok = (j >= 0) & (j < n)
            bj = bt_ref[jnp.where(ok, j, 0), :]
            total = jnp.sum(ai * bj)
            out_ref[k, :] = jnp.where(ok, total, jnp.zeros((), acc))[None]
            return carry

        lax.fori_loop(indptr_ref[i], indptr_ref[i + 1], entry, 0)

    def call(a, bt, indices, indptr, *, interpret):
        nnz = indices.shape[0]
        if m == 0 or n == 0 or nnz == 0:
            return jnp.zeros(out.shape, out.dtype)
        width = _pow2(max(a.shape[1], 1))
        av = jnp.pad(a.astype(acc), ((0, 0), (0, width - a.shape[1])))
        bt = jnp.pad(bt.astype(acc), ((0, 0), (0, width - a.shape[1])))
        res = pl.pallas_call(
            _rows(m, body_of_row), out_shape=jax.ShapeDtypeStruct((nnz, 1), acc),
            grid=(pl.cdiv(m, _ROWS_PER_PROGRAM),), interpret=interpret, compiler_params=triton_params(),
        )(av, bt, indices, indptr)
        k = jnp.arange(nnz)
        live = (k >= indptr[0]) & (k < indptr[-1])
        return jnp.where(live, res[:, 0], 0).astype(out.dtype)

    return call
