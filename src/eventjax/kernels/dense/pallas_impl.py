"""Pallas kernels for the dense family (``binary_densemv``, ``binary_densemm``).

Each generator ``kg(*, transpose, outs)`` returns ``call(weights, spikes, *,
interpret)``, the form :mod:`eventjax.backends.pallas` expects.

On the gpu (Triton), both directions are gathers over tiles of the weight
matrix, so neither needs atomics: ``transpose=False`` gives each program a block of output
rows and loops over column tiles; ``transpose=True`` gives it a block of
output columns and loops over row tiles. A vector of events travels as one
column. Each tile *selects* the weights of the events (never multiplies by
a 0/1 mask), so a non-event contributes nothing even where its weight is
NaN; that is also why the tile is reduced with a sum, not a ``dot``.

Operands whose sizes are not multiples of the tile are padded with zeros
(non-events) before the kernel, which costs a copy of the weights; sizes
that are multiples of the tile pass through untouched.

The tpu kernels (Mosaic) are shaped for the TPU instead; see the section
"TPU" below.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from eventjax.kernels.common.compaction import event_mask
from eventjax.kernels.common.events import accumulation_dtype, event_indicator
from eventjax.kernels.common.pallas.rows import triton_params
from eventjax.kernels.common.pallas.tpu_rows import tpu_interpret

__all__ = ['binary_densemm_kernel', 'binary_densemm_tpu_kernel', 'binary_densemv_kernel',
           'binary_densemv_tpu_kernel']

# Rows x columns of a weight tile, and the widest block of event columns
# one program handles (Triton needs powers of 2; the 3-D select-and-sum of a
# tile holds tile x event-columns values).
_TILE = (16, 16)
_MAX_COLS = 16


def _next_pow2(n: int) -> int:
    return 1 << max(0, (n - 1).bit_length())


def _round_up(n: int, k: int) -> int:
    return -(-n // k) * k


def _pad_to(x, shape):
    pads = tuple((0, t - s) for s, t in zip(x.shape, shape))
    return x if all(p == (0, 0) for p in pads) else jnp.pad(x, pads)


def _block_cols(e_ref):
    return min(e_ref.shape[1], _MAX_COLS)


def _gather_body(n_steps, tile, acc, transpose):
    """A program sums one block of output rows (output columns of ``W`` when ``transpose``) over ``n_steps`` tiles."""
    bm, bn = tile
    block, step_len = (bn, bm) if transpose else (bm, bn)

    def body(w_ref, e_ref, y_ref):
        r, c = pl.program_id(0), pl.program_id(1)
        bp = _block_cols(e_ref)

        def step(t, total):
            e = e_ref[pl.ds(t * step_len, step_len), pl.ds(c * bp, bp)]
            if transpose:
                w = w_ref[pl.ds(t * bm, bm), pl.ds(r * bn, bn)].astype(acc)
                return total + jnp.where(e[:, None, :] > 0, w[:, :, None], jnp.zeros((), acc)).sum(axis=0)
            w = w_ref[pl.ds(r * bm, bm), pl.ds(t * bn, bn)].astype(acc)
            return total + jnp.where(e[None, :, :] > 0, w[:, :, None], jnp.zeros((), acc)).sum(axis=1)

        total = lax.fori_loop(0, n_steps, step, jnp.zeros((block, bp), acc))
        y_ref[pl.ds(r * block, block), pl.ds(c * bp, bp)] = total.astype(y_ref.dtype)
    return body


def _dense_call(*, transpose, out, tile=_TILE, compiler_params=None):
    acc = accumulation_dtype(out.dtype)
    bm, bn = tile

    def call(weights, spikes, *, interpret):
        m, n = weights.shape
        s = spikes[:, None] if spikes.ndim == 1 else spikes
        p = s.shape[1]
        if m == 0 or n == 0 or p == 0:
            return jnp.zeros(out.shape, out.dtype)
        rows, cols = _round_up(m, bm), _round_up(n, bn)
        width = _next_pow2(p)
        width = _round_up(width, min(width, _MAX_COLS))
        w = _pad_to(weights, (rows, cols))
        e = _pad_to(event_indicator(s, acc), ((rows if transpose else cols), width))
        grid_cols = width // min(width, _MAX_COLS)
        if transpose:
            body, grid, size = _gather_body(rows // bm, tile, acc, True), (cols // bn, grid_cols), cols
        else:
            body, grid, size = _gather_body(cols // bn, tile, acc, False), (rows // bm, grid_cols), rows
        y = pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct((size, width), out.dtype), grid=grid,
                           interpret=interpret, compiler_params=compiler_params)(w, e)
        y = y[:(n if transpose else m), :p]
        return y if len(out.shape) == 2 else y[:, 0]

    return call


def binary_densemv_kernel(*, transpose, outs):
    """``W @ s`` (``s @ W`` when ``transpose``) for gpu (Triton); also serves ``binary_densemm``."""
    return _dense_call(transpose=transpose, out=outs[0], compiler_params=triton_params())


binary_densemm_kernel = binary_densemv_kernel


# -- TPU -----------------------------------------------------------------------
#
# ``s @ W`` fetches only the rows of ``W`` that hold an event: ``W`` stays in
# HBM and the kernel walks the events (as bit words in SMEM, 32 event columns
# to a word), starting the DMA of each event row before it adds the one
# fetched before, so one row's transfer overlaps the previous row's sum. A
# row is added to the sum of each of its event columns (a select, never a
# product with the 0/1 events). ``W @ s`` reads ``W`` in blocks of
# (_TPU_ROWS, _TPU_COLS) that need no padding: the edge blocks' cells past
# the matrix are masked. A vector of events selects and sums along lanes; a
# matrix of events goes through the MXU as a product of the finite weights
# with the 0/1 events (at full float32 precision: the selected weights' sum,
# in the MXU's order); a block with a NaN or an infinity also counts, per
# output, the NaN, +inf and -inf weights the events select (0/1 products,
# exact) and the result is what a sum with those would be.

_TPU_ROWS, _TPU_COLS = 256, 512
_TPU_EVENT_COLS = 256
_WORD = 32


def _event_words(events, groups, chunk, chunks):
    """``(groups * chunks, 1, chunk)`` int32: bit ``c`` of word ``[g * chunks + r // chunk, 0, r % chunk]``
    says whether ``events[r, 32 g + c]`` is an event; rows past ``events``' own hold none.

    Three dimensions, so that a block of one chunk matches the array's last two (a rank-1
    block would make Pallas ask the default device, which need not be a TPU, for its tiling).
    """
    m, p = events.shape
    rows = chunk * chunks
    bits = jnp.pad(event_mask(events), ((0, rows - m), (0, groups * _WORD - p))).reshape(rows, groups, _WORD)
    words = jnp.sum(bits.astype(jnp.uint32) << jnp.arange(_WORD, dtype=jnp.uint32), axis=2, dtype=jnp.uint32)
    return lax.bitcast_convert_type(words, jnp.int32).T.reshape(groups * chunks, 1, chunk)


def _event_rows_body(chunk, width, acc):
    """Per group of 32 event columns, per chunk of rows: add the chunk's event rows of ``W`` to each column's sum."""

    def body(words_ref, w_hbm, y_ref, buf, sem, total):
        first = pl.program_id(1) * chunk

        @pl.when(pl.program_id(1) == 0)
        def _():
            total[...] = jnp.zeros(total.shape, acc)

        def fetch(row, slot):
            return pltpu.make_async_copy(w_hbm.at[pl.ds(row, 1)], buf.at[slot], sem.at[slot])

        def add(word, slot):
            fetch(0, slot).wait()
            row = buf[slot].astype(acc)
            for c in range(width):
                @pl.when(((word >> c) & 1) == 1)
                def _(c=c):
                    total[pl.ds(c, 1), :] += row

        def step(r, carry):
            pending, slot = carry
            word = words_ref[0, r]

            def event():
                fetch(first + r, slot).start()

                @pl.when(pending != 0)
                def _():
                    add(pending, 1 - slot)
                return word, 1 - slot

            return lax.cond(word != 0, event, lambda: (pending, slot))

        pending, slot = lax.fori_loop(0, chunk, step, (jnp.int32(0), jnp.int32(0)))

        @pl.when(pending != 0)
        def _():
            add(pending, 1 - slot)

        @pl.when(pl.program_id(1) == pl.num_programs(1) - 1)
        def _():
            y_ref[...] = total[...].astype(y_ref.dtype)

    return body


# Rows whose event words one grid step reads into SMEM (1 MiB on a v5e, the block held twice).
_WORDS_CHUNK = 16384


def _tpu_event_rows(weights, s, out_dtype, interpret):
    """``s @ W`` for a matrix ``s`` of events, as ``(n, p)``."""
    m, n = weights.shape
    p = s.shape[1]
    groups, width = -(-p // _WORD), min(p, _WORD)
    chunk = min(m, _WORDS_CHUNK)
    chunks = pl.cdiv(m, chunk)
    acc = accumulation_dtype(out_dtype)
    # VMEM: two row buffers and the sums (f32), and the output block twice, each padded to 8 sublanes.
    vmem = _round_up(n, 128) * (16 * weights.dtype.itemsize + 3 * _round_up(width, 8) * 4)
    y = pl.pallas_call(
        _event_rows_body(chunk, width, acc),
        out_shape=jax.ShapeDtypeStruct((groups, width, n), out_dtype),
        grid=(groups, chunks),
        in_specs=[pl.BlockSpec((None, 1, chunk), lambda g, c: (g * chunks + c, 0, 0), memory_space=pltpu.SMEM),
                  pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec((None, width, n), lambda g, c: (g, 0, 0)),
        scratch_shapes=[pltpu.VMEM((2, 1, n), weights.dtype), pltpu.SemaphoreType.DMA((2,)),
                        pltpu.VMEM((width, n), acc)],
        compiler_params=pltpu.CompilerParams(dimension_semantics=('parallel', 'arbitrary'),
                                             vmem_limit_bytes=max(32 << 20, vmem + (4 << 20))),
        interpret=tpu_interpret(interpret),
    )(_event_words(s, groups, chunk, chunks), weights)
    return y.reshape(groups * width, n)[:p].T


def _columns_vector_body(m, n, acc):
    """``W @ s`` for a vector ``s``: per block of rows, the selected weights summed along lanes."""

    def body(w_ref, e_ref, y_ref, total):
        k = pl.program_id(1)

        @pl.when(k == 0)
        def _():
            total[...] = jnp.zeros(total.shape, acc)

        shape = w_ref.shape
        cols = lax.broadcasted_iota(jnp.int32, shape, 1) < n - k * _TPU_COLS
        take = cols & (e_ref[...] != 0)
        total[...] += jnp.sum(jnp.where(take, w_ref[...].astype(acc), jnp.zeros((), acc)), axis=1, keepdims=True)

        @pl.when(k == pl.num_programs(1) - 1)
        def _():
            y_ref[...] = total[...].astype(y_ref.dtype)

    return body


def _columns_matrix_body(m, n, acc):
    """``W @ S`` for a matrix ``S``: per block, the MXU product of the finite weights with the 0/1 events."""

    def body(w_ref, e_ref, y_ref, total, nan, pinf, ninf):
        k = pl.program_id(2)

        @pl.when(k == 0)
        def _():
            for ref in (total, nan, pinf, ninf):
                ref[...] = jnp.zeros(ref.shape, acc)

        cols = lax.broadcasted_iota(jnp.int32, w_ref.shape, 1) < n - k * _TPU_COLS
        rows = lax.broadcasted_iota(jnp.int32, e_ref.shape, 0) < n - k * _TPU_COLS
        w = jnp.where(cols, w_ref[...].astype(acc), jnp.zeros((), acc))
        e = jnp.where(rows, e_ref[...].astype(acc), jnp.zeros((), acc))
        finite = jnp.isfinite(w)
        dot = functools.partial(jnp.dot, preferred_element_type=acc, precision=lax.Precision.HIGHEST)
        total[...] += dot(jnp.where(finite, w, jnp.zeros((), acc)), e)

        @pl.when(jnp.logical_not(jnp.all(finite)))
        def _():
            one, zero = jnp.ones((), acc), jnp.zeros((), acc)
            nan[...] += dot(jnp.where(jnp.isnan(w), one, zero), e)
            pinf[...] += dot(jnp.where(w == jnp.inf, one, zero), e)
            ninf[...] += dot(jnp.where(w == -jnp.inf, one, zero), e)

        @pl.when(k == pl.num_programs(2) - 1)
        def _():
            p, n_, i = pinf[...] > 0, ninf[...] > 0, jnp.inf
            y = jnp.where(p, i, jnp.where(n_, -i, total[...]))
            y = jnp.where((nan[...] > 0) | (p & n_), jnp.nan, y)
            y_ref[...] = y.astype(y_ref.dtype)

    return body


def _tpu_event_columns(weights, s, vector, out_dtype, interpret):
    """``W @ s`` (``s`` a vector, or a matrix of events), as ``(m, p)``."""
    m, n = weights.shape
    p = s.shape[1]
    acc = accumulation_dtype(out_dtype)
    bm, bn = min(m, _TPU_ROWS), min(n, _TPU_COLS)
    if vector:
        grid = (pl.cdiv(m, bm), pl.cdiv(n, bn))
        w_spec = pl.BlockSpec((bm, bn), lambda i, k: (i, k))
        params = pltpu.CompilerParams(dimension_semantics=('parallel', 'arbitrary'))
        e = event_indicator(s[:, 0], jnp.int32)[None, :]
        return pl.pallas_call(
            _columns_vector_body(m, n, acc), out_shape=jax.ShapeDtypeStruct((m, 1), out_dtype), grid=grid,
            in_specs=[w_spec, pl.BlockSpec((1, bn), lambda i, k: (0, k))],
            out_specs=pl.BlockSpec((bm, 1), lambda i, k: (i, 0)),
            scratch_shapes=[pltpu.VMEM((bm, 1), acc)], compiler_params=params,
            interpret=tpu_interpret(interpret))(weights, e)
    # Event columns in blocks too, so VMEM holds a block of them whatever their number (edge
    # columns past S only reach output columns past it, which are dropped).
    bp = p if p <= _TPU_EVENT_COLS else _TPU_EVENT_COLS
    return pl.pallas_call(
        _columns_matrix_body(m, n, acc), out_shape=jax.ShapeDtypeStruct((m, p), out_dtype),
        grid=(pl.cdiv(m, bm), pl.cdiv(p, bp), pl.cdiv(n, bn)),
        in_specs=[pl.BlockSpec((bm, bn), lambda i, j, k: (i, k)), pl.BlockSpec((bn, bp), lambda i, j, k: (k, j))],
        out_specs=pl.BlockSpec((bm, bp), lambda i, j, k: (i, j)),
        scratch_shapes=[pltpu.VMEM((bm, bp), acc) for _ in range(4)],
        compiler_params=pltpu.CompilerParams(dimension_semantics=('parallel', 'parallel', 'arbitrary')),
        interpret=tpu_interpret(interpret))(weights, event_indicator(s, acc))


def binary_densemv_tpu_kernel(*, transpose, outs):
    """``W @ s`` (``s @ W`` when ``transpose``) for tpu (Mosaic); also serves ``binary_densemm``."""
    out = outs[0]

    def call(weights, spikes, *, interpret):
        s = spikes[:, None] if spikes.ndim == 1 else spikes
        if 0 in weights.shape or s.shape[1] == 0:
            return jnp.zeros(out.shape, out.dtype)
        # Mosaic has no float16 vector loads or stores: such weights are read, and the
        # sums written, as float32 (a copy of the weights).
        acc = accumulation_dtype(out.dtype)
        weights = weights.astype(acc)
        if transpose:
            y = _tpu_event_rows(weights, s, acc, interpret)
        else:
            y = _tpu_event_columns(weights, s, spikes.ndim == 1, acc, interpret)
        return (y if len(out.shape) == 2 else y[:, 0]).astype(out.dtype)

    return call


binary_densemm_tpu_kernel = binary_densemv_tpu_kernel
