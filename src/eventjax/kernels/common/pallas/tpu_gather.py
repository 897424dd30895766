"""TPU (Mosaic) gather over rows of equal length: ``y[i] = sum_j coef(w[i, j], x[indices[i, j]])``.

The TPU has no fast per-element gather from memory, but it permutes the 128
lanes of a vector register by index (``tpu.dynamic_gather``, which Mosaic
lowers ``jnp.take_along_axis`` to). So ``x`` is held in VMEM as a table of
128-wide rows and each entry's value is picked from a row by its lane:

- events: ``x`` packed 32 events to an int32 word, so 4,096 events fill one
  row; an entry's bit is ``(word[t >> 5] >> (t & 31)) & 1``;
- float ``x``: the values themselves, 128 to a row.

A target whose table spans more rows than one is found by gathering from
every row and keeping the row its high bits name (a select, never a
product), so a NaN or inf weight or value reaches only its own entry's row,
as on every backend, and no input needs the ``jax`` kernel.

Up to 512 entries per row, a block of 128 rows is turned on its side in the
kernel: entries along sublanes and the 128 rows along lanes, so no lane is
padding for ``k = 100``, each row's sum is a sum over sublanes (vector
adds), and the sums leave the kernel 128 to a row of the result. Longer rows
are read as stored, ``(m, k)``, entries along lanes; each row's sum is a lane
reduction.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from eventjax.kernels.common.events import accumulation_dtype
from eventjax.kernels.common.pallas.tpu_pieces import in_32_bits
from eventjax.kernels.common.pallas.tpu_rows import packed_flags, tpu_interpret

__all__ = ['entry_terms', 'fcn_gather', 'gather_table']

_LANES = 128
# Entries (lanes padded to 128) held in registers at once: a chunk of rows of about 8 vregs.
_CHUNK_ENTRIES = 8 * 1024
# Entries per program: big enough that a program's DMA dwarfs its fixed cost, small in VMEM.
_PROGRAM_ENTRIES = 64 * 1024
# Table rows selected one by one in straight-line code (events: up to 262,144 targets); more go through a loop.
_UNROLLED_ROWS = 64
# Rows of up to this many entries are turned on their side (see above); 8 blocks of 128 such rows fill VMEM.
_SIDEWAYS_ENTRIES = 512
# Entries (sublanes) of a sideways block worked on at once, by the table's rows (unrolled): a group's gathers
# and selects over every row are scheduled together, and past a few rows a smaller group schedules tighter.
# libtpu's bundles per block of 128 rows of 100 entries (v5e): 6 rows 384 (32) / 424 (8); 13 rows 639 (16) /
# 727 (32); 25 rows 1,011 (8) / 1,197 (32).
# Past _UNROLLED_ROWS the rows' loop spreads its cost per iteration over 32 entries.
_GROUPS = ((6, 32), (13, 16), (_UNROLLED_ROWS, 8))
# Each entry picks the lane its index names from the same sublane of the table row.
_LANE_GATHER = lax.GatherDimensionNumbers(offset_dims=(), collapsed_slice_dims=(1,), start_index_map=(1,),
                                          operand_batching_dims=(0,), start_indices_batching_dims=(0,))


def _group(table_rows):
    """The entries a sideways block works on at once, for a table of ``table_rows`` rows."""
    return next((g for rows, g in _GROUPS if table_rows <= rows), 32)


def _each_block(step, *, count, homogeneous):
    """A kernel body running ``step(b, table_ref, idx_ref, w_ref, y_ref)`` for blocks ``b < count``."""
    def body(*refs):
        if homogeneous:
            w_ref, table_ref, idx_ref, y_ref = refs
        else:
            table_ref, idx_ref, w_ref, y_ref = refs

        def one(b, carry):
            step(b, table_ref, idx_ref, w_ref, y_ref)
            return carry

        lax.fori_loop(0, count, one, 0)
    return body


def _gather_body(*, k, n, chunk, n_chunks, table_rows, homogeneous, events):
    """Rows as stored: entries along lanes, each row's sum a lane reduction."""
    def one_chunk(c, table_ref, idx_ref, w_ref, y_ref):
        rows = pl.ds(pl.multiple_of(c * chunk, chunk), chunk) if n_chunks > 1 else slice(None)
        w = w_ref[0] if homogeneous else w_ref[rows, :]
        term = entry_terms(table_ref, idx_ref[rows, :], w, n=n, table_rows=table_rows, events=events)
        y_ref[rows, :] = jnp.sum(term, axis=1, keepdims=True).astype(y_ref.dtype)

    return _each_block(one_chunk, count=n_chunks, homogeneous=homogeneous)


def entry_terms(table_ref, t, w, *, n, table_rows, events):
    """Each entry's term, in a kernel: its weight where its target ``t`` has an event (events), else weight
    times value; 0 for a target outside ``[0, n)``. ``table_ref`` holds :func:`gather_table`'s table."""
    if t.shape[0] == 1:  # Mosaic lowers no lane gather of a single sublane: gather two, keep one
        w = w if jnp.ndim(w) == 0 else jnp.broadcast_to(w, (2, w.shape[1]))
        return entry_terms(table_ref, jnp.broadcast_to(t, (2, t.shape[1])), w, n=n, table_rows=table_rows,
                      events=events)[:1]
    keep = (t >= 0) & (t < n)
    slot = lax.shift_right_logical(t, 5) if events else t
    lo = lax.bitwise_and(slot, _LANES - 1)
    hi = lax.shift_right_logical(slot, 7)

    lanes = lo.reshape(*lo.shape, 1)

    def pick(h, got):
        # lax, not jnp: this runs table_rows times a group, and jnp's wrappers made tracing the kernel most of
        # a first call's time (the same Mosaic ops either way: jnp.take_along_axis is this gather).
        row = lax.broadcast_in_dim(table_ref[pl.ds(h, 1), :], (t.shape[0], _LANES), (0, 1))
        v = lax.gather(row, lanes, _LANE_GATHER, (1, 1), mode=lax.GatherScatterMode.PROMISE_IN_BOUNDS)
        return v if table_rows == 1 else lax.select(hi == h, v, got)

    got = jnp.zeros(t.shape, table_ref.dtype)
    # Straight-line code lets the gathers and selects of rows overlap; a loop unrolled whole is traced once
    # and repeated by the lowering, which Python's loop would trace table_rows times.
    got = lax.fori_loop(0, table_rows, pick, got, unroll=table_rows if table_rows <= _UNROLLED_ROWS else 8)
    w = w if jnp.ndim(w) == 0 else w.astype(jnp.float32)
    if events:
        bit = lax.bitwise_and(lax.shift_right_logical(got, lax.bitwise_and(t, 31)), 1)
        return jnp.where(keep & (bit != 0), w, 0.0)
    return jnp.where(keep, w * got, 0.0)


def _sideways_body(*, k, n, n_blocks, table_rows, homogeneous, events):
    """Blocks of 128 rows turned on their side: entries along sublanes, rows along lanes (see the module)."""
    def one_block(b, table_ref, idx_ref, w_ref, y_ref):
        rows = pl.ds(pl.multiple_of(b * _LANES, _LANES), _LANES) if n_blocks > 1 else slice(None)
        t_side = idx_ref[rows, :].T
        w_side = None if homogeneous else w_ref[rows, :].T
        total = jnp.zeros((1, _LANES), jnp.float32)
        group = _group(table_rows)
        for g in range(0, k, group):
            part = slice(g, min(k, g + group))
            w = w_ref[0] if homogeneous else w_side[part]
            term = entry_terms(table_ref, t_side[part], w, n=n, table_rows=table_rows, events=events)
            total = total + jnp.sum(term, axis=0, keepdims=True)
        y_ref[pl.ds(b, 1), :] = total.astype(y_ref.dtype)

    return _each_block(one_block, count=n_blocks, homogeneous=homogeneous)


def _blocks(m, k):
    """(rows per chunk, chunks per program): whole matrices that fit one chunk run as one block."""
    lanes = pl.cdiv(k, _LANES) * _LANES
    chunk = max(8, _CHUNK_ENTRIES // lanes // 8 * 8)
    if m <= chunk:
        return m, 1
    return chunk, max(1, min(_PROGRAM_ENTRIES // (chunk * lanes), m // chunk))


def gather_table(x, events):
    """``x`` as the table :func:`entry_terms` picks from: rows of 128 lanes, events packed 32 to a word.

    Example:
        >>> gather_table(jnp.arange(3.0), events=False).shape
        (1, 128)
    """
    table = packed_flags(x) if events else x.astype(jnp.float32)
    table_rows = max(1, pl.cdiv(table.shape[0], _LANES))
    return jnp.pad(table, (0, table_rows * _LANES - table.shape[0])).reshape(table_rows, _LANES)


def fcn_gather(weights, indices, x, *, n, events, out_dtype, interpret):
    """``y[i] = sum_j w[i, j] * x[indices[i, j]]`` (events: the weights where ``x`` has an event); length ``m``.

    ``indices`` and per-entry ``weights`` are ``(m, k)``; ``(1, 1)`` weights
    are shared. Indices outside ``[0, n)`` are dropped.

    Example (on a TPU; ``interpret=True`` runs Pallas's TPU interpreter):
        >>> idx = jnp.array([[0, 2], [1, 1]], jnp.int32)
        >>> fcn_gather(jnp.ones((2, 2)), idx, jnp.array([True, False, True]), n=3, events=True,
        ...            out_dtype=jnp.float32, interpret=True)
        Array([2., 0.], dtype=float32)
    """
    m, k = indices.shape
    acc = accumulation_dtype(out_dtype)
    homogeneous = weights.shape == (1, 1) and not (m == 1 and k == 1)
    table = gather_table(x, events)
    table_rows = table.shape[0]
    indices = indices.astype(jnp.int32)
    # Mosaic has no float16 vector loads, and packed types tile 16 rows deep; float32 is read as stored.
    weights = weights.reshape(1) if homogeneous else weights.astype(jnp.float32)
    if k <= _SIDEWAYS_ENTRIES:
        if m < _LANES:  # one block of 128 rows; the rows past m gather nothing
            indices = jnp.pad(indices, ((0, _LANES - m), (0, 0)), constant_values=-1)
            weights = weights if homogeneous else jnp.pad(weights, ((0, _LANES - m), (0, 0)))
        out_rows = pl.cdiv(max(m, _LANES), _LANES)
        n_blocks = 8 * (_SIDEWAYS_ENTRIES // (pl.cdiv(k, _LANES) * _LANES))
        n_blocks = out_rows if out_rows <= n_blocks else n_blocks
        body = _sideways_body(k=k, n=n, n_blocks=n_blocks, table_rows=table_rows, homogeneous=homogeneous,
                              events=events)
        block, out_shape, grid = n_blocks * _LANES, (out_rows, _LANES), pl.cdiv(out_rows, n_blocks)
        out_spec = pl.BlockSpec((n_blocks, _LANES), lambda i: (i, 0))
    else:
        chunk, n_chunks = _blocks(m, k)
        block, out_shape = chunk * n_chunks, (m, 1)
        grid = pl.cdiv(m, block)
        body = _gather_body(k=k, n=n, chunk=chunk, n_chunks=n_chunks, table_rows=table_rows,
                            homogeneous=homogeneous, events=events)
        out_spec = pl.BlockSpec((block, 1), lambda i: (i, 0))
    table_spec = pl.BlockSpec((table_rows, _LANES), lambda i: (0, 0))
    row_spec = pl.BlockSpec((block, k), lambda i: (i, 0))
    if homogeneous:
        args = [weights.astype(jnp.float32), table, indices]
        specs = [pl.BlockSpec(memory_space=pltpu.SMEM), table_spec, row_spec]
    else:
        args, specs = [table, indices, weights], [table_spec, row_spec, row_spec]
    y = pl.pallas_call(
        in_32_bits(body), out_shape=jax.ShapeDtypeStruct(out_shape, acc),
        grid=(grid,), in_specs=specs,
        out_specs=out_spec, compiler_params=pltpu.CompilerParams(dimension_semantics=('parallel',)),
        interpret=tpu_interpret(interpret),
    )(*args)
    return y.reshape(-1)[:m].astype(out_dtype)
