"""Pallas kernel (gpu, Triton lowering) of the index-list product: one program per block of list slots.

Each program takes 8 slots of ``ids``; a live slot loops over its row's
entries and adds each weight into the output with ``atomic_add`` (Triton
only), so the work is the events times their row lengths. There is no TPU
kernel (see :data:`TPU_UNSUPPORTED`).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

from eventjax.kernels.common.events import accumulation_dtype
from eventjax.kernels.common.pallas.rows import add_into_row, triton_params

__all__ = ['TPU_UNSUPPORTED', 'binary_csrmm_indexed_kernel', 'binary_csrmv_indexed_kernel',
           'binary_csrmv_packed_kernel', 'csr_slice_rows_kernel']

TPU_UNSUPPORTED = ('The index-list product adds into data-dependent outputs; Mosaic (TPU) has no atomics. '
                   "Use backend='jax' on tpu.")
_SLOTS_PER_PROGRAM = 8


def _body(m, n, acc, permuted, matrix):
    """The program body over ``_SLOTS_PER_PROGRAM`` list slots.

    With ``matrix`` an entry adds into the event columns of its row of ``B``
    (the operand before the zeros), else one value.
    """

    def body(data_ref, indices_ref, indptr_ref, perm_ref, ids_ref, count_ref, *rest):
        y_ref = rest[-1]
        base = pl.program_id(0) * _SLOTS_PER_PROGRAM
        nnz, nd = indices_ref.shape[0], data_ref.shape[0]
        capacity = ids_ref.shape[0]

        def slot(r, carry):
            s = base + r
            i = ids_ref[jnp.minimum(s, capacity - 1)]

            @pl.when((s < capacity) & (s < count_ref[0]) & (i >= 0) & (i < m))
            def _():
                if matrix:
                    row = rest[0][jnp.clip(i, 0, m - 1), :]
                    ev = jnp.where(row if row.dtype == jnp.bool_ else row > 0, 1.0, 0.0).astype(acc)
                start = jnp.clip(indptr_ref[i], 0, nnz)
                end = jnp.clip(indptr_ref[i + 1], start, nnz)

                def entry(k, carry):
                    j = indices_ref[k]
                    if nd == 1:
                        p, w = 0, data_ref[0]
                    else:
                        p = perm_ref[k] if permuted else k
                        w = data_ref[jnp.clip(p, 0, nd - 1)]

                    @pl.when((j >= 0) & (j < n) & (p >= 0) & (p < nd))
                    def _():
                        add_into_row(y_ref, j, w.astype(acc) * ev if matrix else jnp.full((1,), w, acc))
                    return carry

                lax.fori_loop(start, end, entry, 0)
            return carry

        lax.fori_loop(0, _SLOTS_PER_PROGRAM, slot, 0)
    return body


def binary_csrmv_indexed_kernel(*, shape, permuted, outs):
    """``call(data, indices, indptr, perm, ids, count, *, interpret)`` for the pallas bridge."""
    m, n = shape
    out = outs[0]
    acc = accumulation_dtype(out.dtype)

    def call(data, indices, indptr, perm, ids, count, *, interpret):
        if m == 0 or n == 0 or indices.shape[0] == 0 or ids.shape[0] == 0:
            return jnp.zeros(out.shape, out.dtype)
        body = _body(m, n, acc, permuted, False)
        zeros = jnp.zeros((n, 1), acc)
        y = pl.pallas_call(
            body, out_shape=jax.ShapeDtypeStruct((n, 1), acc), grid=(pl.cdiv(ids.shape[0], _SLOTS_PER_PROGRAM),),
            input_output_aliases={6: 0}, interpret=interpret, compiler_params=triton_params(),
        )(data, indices, indptr, perm, ids, count, zeros)
        # An overflowed list (count past its length): NaN everywhere, as on every backend.
        return jnp.where(count[0] > ids.shape[0], jnp.array(jnp.nan, out.dtype), y[:, 0].astype(out.dtype))

    return call


def binary_csrmm_indexed_kernel(*, shape, permuted, outs):
    """``call(data, indices, indptr, perm, ids, count, B, *, interpret)``: a program per 8 slots, a row of B each.

    ``B``'s columns are padded to a power of two (Triton's block sizes).
    """
    m, n = shape
    out = outs[0]
    acc = accumulation_dtype(out.dtype)

    def call(data, indices, indptr, perm, ids, count, B, *, interpret):
        k = B.shape[1]
        kp = 1 << max(0, (k - 1).bit_length())
        padded = jnp.pad(B, ((0, 0), (0, kp - k)))
        zeros = jnp.zeros((n, kp), acc)
        y = pl.pallas_call(
            _body(m, n, acc, permuted, True), out_shape=jax.ShapeDtypeStruct((n, kp), acc),
            grid=(pl.cdiv(ids.shape[0], _SLOTS_PER_PROGRAM),), input_output_aliases={7: 0}, interpret=interpret,
            compiler_params=triton_params(),
        )(data, indices, indptr, perm, ids, count, padded, zeros)
        return jnp.where(count[0] > ids.shape[0], jnp.array(jnp.nan, out.dtype), y[:, :k].astype(out.dtype))

    return call


def _slice_body(m, n, acc):

    def body(data_ref, indices_ref, indptr_ref, rows_ref, _zeros_ref, y_ref):
        base = pl.program_id(0) * _SLOTS_PER_PROGRAM
        nnz, k, homogeneous = indices_ref.shape[0], rows_ref.shape[0], data_ref.shape[0] == 1

        def slot(r, carry):
            s = base + r
            i = rows_ref[jnp.minimum(s, k - 1)]

            @pl.when((s < k) & (i >= 0) & (i < m))
            def _():
                start = jnp.clip(indptr_ref[i], 0, nnz)
                end = jnp.clip(indptr_ref[i + 1], start, nnz)

                def entry(e, carry):
                    j = indices_ref[e]
                    w = data_ref[0 if homogeneous else e]

                    @pl.when((j >= 0) & (j < n))
                    def _():
                        add_into_row(y_ref, s * n + j.astype(s.dtype), jnp.full((1,), w, acc))
                    return carry

                lax.fori_loop(start, end, entry, 0)
            return carry

        lax.fori_loop(0, _SLOTS_PER_PROGRAM, slot, 0)
    return body


def csr_slice_rows_kernel(*, shape, outs):
    """``call(data, indices, indptr, rows, *, interpret)``: a program per 8 chosen rows."""
    m, n = shape
    out = outs[0]
    acc = accumulation_dtype(out.dtype)

    def call(data, indices, indptr, rows, *, interpret):
        k = rows.shape[0]
        y = pl.pallas_call(
            _slice_body(m, n, acc), out_shape=jax.ShapeDtypeStruct((k * n, 1), acc),
            grid=(pl.cdiv(k, _SLOTS_PER_PROGRAM),), input_output_aliases={4: 0}, interpret=interpret,
            compiler_params=triton_params(),
        )(data, indices, indptr, rows, jnp.zeros((k * n, 1), acc))
        return y.reshape(k, n).astype(out.dtype)

    return call


def _packed_body(acc, transpose):

    def bounds(indptr_ref, sizes_ref, i, nnz):
        k = sizes_ref[2]
        fixed_start, fixed_end = jnp.minimum(i * k, nnz), jnp.minimum(i * k + k, nnz)
        start = jnp.clip(indptr_ref[jnp.minimum(i, indptr_ref.shape[0] - 1)], 0, nnz)
        end = jnp.clip(indptr_ref[jnp.minimum(i + 1, indptr_ref.shape[0] - 1)], start, nnz)
        return jnp.where(k > 0, fixed_start, start), jnp.where(k > 0, fixed_end, end)

    def weight(data_ref, e):
        return data_ref[0] if data_ref.shape[0] == 1 else data_ref[e]

    def scatter(data_ref, indices_ref, indptr_ref, words_ref, sizes_ref, _zeros_ref, y_ref):
        base = pl.program_id(0) * _SLOTS_PER_PROGRAM
        nnz, n_words = indices_ref.shape[0], words_ref.shape[0]
        m, n = sizes_ref[0], sizes_ref[1]

        def word(r, carry):
            q = base + r
            bits = words_ref[jnp.minimum(q, n_words - 1)]

            @pl.when((q < n_words) & (bits != 0))
            def _():
                def bit(b, carry):
                    b = b.astype(q.dtype)  # the loop counter is int64 under jax_enable_x64
                    i = (q * 32 + b).astype(m.dtype)  # compared with the sizes, of the indices' dtype

                    @pl.when((i < m) & (((bits >> b.astype(jnp.uint32)) & 1) != 0))
                    def _():
                        start, end = bounds(indptr_ref, sizes_ref, i, nnz)

                        def entry(e, carry):
                            j = indices_ref[e]

                            @pl.when((j >= 0) & (j < n))
                            def _():
                                add_into_row(y_ref, j, jnp.full((1,), weight(data_ref, e), acc))
                            return carry

                        lax.fori_loop(start, end, entry, 0)
                    return carry

                lax.fori_loop(0, 32, bit, 0)
            return carry

        lax.fori_loop(0, _SLOTS_PER_PROGRAM, word, 0)

    def gather(data_ref, indices_ref, indptr_ref, words_ref, sizes_ref, _zeros_ref, y_ref):
        base = pl.program_id(0) * _SLOTS_PER_PROGRAM
        nnz, m, n = indices_ref.shape[0], y_ref.shape[0], sizes_ref[1]

        def row(r, carry):
            i = base + r

            @pl.when(i < m)
            def _():
                start, end = bounds(indptr_ref, sizes_ref, i, nnz)

                def entry(e, total):
                    j = indices_ref[e]
                    word = words_ref[jnp.clip(j // 32, 0, words_ref.shape[0] - 1)]
                    hit = (j >= 0) & (j < n) & (((word >> (j % 32).astype(jnp.uint32)) & 1) != 0)
                    return total + jnp.where(hit, weight(data_ref, e).astype(acc), jnp.zeros((), acc))

                y_ref[i, :] = jnp.full((1,), lax.fori_loop(start, end, entry, jnp.zeros((), acc)), acc)
            return carry

        lax.fori_loop(0, _SLOTS_PER_PROGRAM, row, 0)

    return scatter if transpose else gather


def binary_csrmv_packed_kernel(*, shape, fixed, transpose, outs):
    """``call(data, indices, indptr, words, sizes, *, interpret)``: a program per 8 words (scatter) or 8 rows."""
    m, n = shape
    out = outs[0]
    acc = accumulation_dtype(out.dtype)
    size = n if transpose else m

    def call(data, indices, indptr, words, sizes, *, interpret):
        work = words.shape[0] if transpose else m
        y = pl.pallas_call(
            _packed_body(acc, transpose), out_shape=jax.ShapeDtypeStruct((size, 1), acc),
            grid=(pl.cdiv(work, _SLOTS_PER_PROGRAM),), input_output_aliases={5: 0}, interpret=interpret,
            compiler_params=triton_params(),
        )(data, indices, indptr, words, sizes, jnp.zeros((size, 1), acc))
        return y[:, 0].astype(out.dtype)

    return call
