"""TPU (Mosaic) CSR ``W @ s`` over rows of any length: each entry's term, then a running sum per row.

Rows of equal length run as FCN rows (:func:`~eventjax.kernels.common.pallas.tpu_gather.fcn_gather`);
rows of unequal length have no such layout, and XLA's per-element gather
and scatter on a TPU cost tens of nanoseconds an entry. Here the entries are
read as stored, laid out 128 to a row (no copy when they fill whole rows):

- each entry's term is picked from ``x`` held in VMEM as a table, as the FCN
  gather does (:func:`~eventjax.kernels.common.pallas.tpu_gather.entry_terms`);
- a running sum over the entries in their order restarts at each row's first
  entry (a segmented scan: seven shifted adds across the 128 lanes, then the
  layout's rows 8 at a time, the last sum carried from block to block); the
  rows' first entries are marked in the kernel, 128 rows' starts at a time
  by one product of one-hot factors on the MXU (XLA's scatter would visit
  them one by one);
- each row's sum is the running sum at its last entry (0 for an empty row),
  read by XLA as that entry's whole layout row and a select of its lane.

A row's sum is then its own terms added in order, whatever the other rows
hold: a restart is a select, never a subtraction, so a NaN, an inf or a large
value of one row never reaches another.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from eventjax.kernels.common.pallas.tpu_gather import entry_terms, gather_table
from eventjax.kernels.common.pallas.tpu_pieces import by_columns, in_32_bits, in_pieces, search_sorted
from eventjax.kernels.common.pallas.tpu_rows import dot_t, tpu_interpret

__all__ = ['segment_gather']

_LANES = 128
# Layout rows (of 128 entries) a program reads: 32,768 entries, 128 KiB an operand.
_BLOCK = 256
# Terms are picked 8 layout rows (a vreg) at a time from a table of more rows than this, else a block at once:
# libtpu's bundles per block (v5e) 3,468 with 8 against 3,934 at 25 table rows (100,000 events), 1,885 with
# the block against 1,983 at 4.
_WHOLE_BLOCK_TABLE_ROWS = 4
# Rows whose sums are read as whole layout rows (256 MiB of them at most), past which one value a row.
_ROWS_READ_WHOLE = 524_288


def _segmented_scan(v, seen, axis):
    """Along ``axis``, each element's sum back to the last restart at or before it (to the first element if
    none), and whether there is one: log2(length) steps of shifted adds; ``seen`` is int32, 1 at a restart."""
    at = lax.broadcasted_iota(jnp.int32, v.shape, axis)
    d = 1
    while d < v.shape[axis]:
        inside = at >= d
        shifted_v, shifted_seen = pltpu.roll(v, d, axis), pltpu.roll(seen, d, axis)
        v = jnp.where((seen == 0) & inside, v + shifted_v, v)
        seen = jnp.where(inside, seen | shifted_seen, seen)
        d *= 2
    return v, seen


def _scan_rows(last, closed, carry):
    """What each layout row receives from the rows before it: ``carry`` (the block before's last sum)
    plus the sums of the rows since the last row that holds a restart. ``last`` and ``closed`` are the
    rows' lane-127 sums and restart flags, ``(rows, 128)`` with every lane the same; rows go 8 at a time
    (a vreg: three shifted adds down its sublanes), the carry passed from each 8 to the next."""
    received = []
    row = lax.broadcasted_iota(jnp.int32, (8, _LANES), 0)
    for g in range(0, last.shape[0], 8):
        v, seen = _segmented_scan(last[g:g + 8], closed[g:g + 8], 0)
        inclusive = jnp.where(seen == 0, v + carry, v)
        # Row i receives row i - 1's inclusive sum (the group's first row the carry).
        received.append(jnp.where(row == 0, carry, pltpu.roll(inclusive, 1, 0)))
        carry = inclusive[7:8]
    return jnp.concatenate(received, axis=0), carry


def _restarts(bounds_ref, starts_ref, *, block):
    """The block's restart flags, ``(block, 128)`` int32, 1 where a row starts: the rows that start in block
    ``b`` (``bounds[b] <= j < bounds[b + 1]``, the starts held in VMEM 128 to a row) are counted into place
    128 at a time by one MXU product of one-hot factors (0/1 in bfloat16, counts summed in float32: exact)."""
    b = pl.program_id(0)
    first = b * (block * _LANES)

    def chunk(c, counts):
        # The iotas made here, each time: held across the loop they would spill.
        at_hi = lax.broadcasted_iota(jnp.int32, (block, _LANES), 0)
        at_lo = lax.broadcasted_iota(jnp.int32, (_LANES, _LANES), 0)
        local = starts_ref[pl.ds(c, 1), :] - first
        hi = jnp.where((local >= 0) & (local < block * _LANES), lax.shift_right_logical(local, 7), -1)
        rows = (at_hi == hi).astype(jnp.bfloat16)  # [h, j]: start j in layout row h of the block
        lanes = (at_lo == lax.bitwise_and(local, _LANES - 1)).astype(jnp.bfloat16)  # [l, j]: in lane l
        return counts + dot_t(rows, lanes, False)

    lo, hi = bounds_ref[b], bounds_ref[b + 1]
    # Shifts, not floor divisions (Mosaic lowers those through the chip's description, which a compile
    # without a chip lacks); the bounds are not negative.
    counts = lax.fori_loop(lax.shift_right_logical(lo, 7), lax.shift_right_logical(hi + _LANES - 1, 7), chunk,
                           jnp.zeros((block, _LANES), jnp.float32))
    return (counts > 0).astype(jnp.int32)


def _at_ends(sums, ends, read_rows):
    """Each row's running sum at its last entry. A TPU gathers whole rows of 128 faster than single values
    (one TPU v5e: 17 against 61 us for 4,000 rows, 0.53 against 1.24 ms for 100,000): each row's layout row
    is read whole and its lane picked by a select (so a NaN or inf stays in its row); the rows read take
    512 bytes each, so past _ROWS_READ_WHOLE rows the values are gathered one by one."""
    last = jnp.maximum(ends - 1, 0)
    if not read_rows or ends.shape[0] > _ROWS_READ_WHOLE:
        return sums.reshape(-1)[last]
    read = sums[lax.shift_right_logical(last, 7)]
    lane = lax.broadcasted_iota(jnp.int32, read.shape, 1) == lax.bitwise_and(last, _LANES - 1)[:, None]
    return jnp.sum(jnp.where(lane, read, 0.0), axis=1)


def _body(*, n, table_rows, homogeneous, events):
    def body(bounds_ref, *refs):
        if homogeneous:
            w_ref, table_ref, idx_ref, starts_ref, out_ref, carry_ref = refs
            weights = lambda rows: w_ref[0]  # noqa: E731 - one shared weight
        else:
            table_ref, idx_ref, w_ref, starts_ref, out_ref, carry_ref = refs
            weights = lambda rows: w_ref[rows, :]  # noqa: E731

        @pl.when(pl.program_id(0) == 0)
        def _():
            carry_ref[...] = jnp.zeros(carry_ref.shape, jnp.float32)

        block = idx_ref.shape[0]
        restart = _restarts(bounds_ref, starts_ref, block=block)  # first: its loop then holds no terms
        g = block if table_rows <= _WHOLE_BLOCK_TABLE_ROWS else 8
        terms = jnp.concatenate([
            entry_terms(table_ref, idx_ref[r:r + g, :], weights(slice(r, r + g)), n=n, table_rows=table_rows,
                        events=events) for r in range(0, block, g)], axis=0)
        v, seen = _segmented_scan(terms, restart, 1)  # across the lanes: seven steps
        shape = v.shape
        last = jnp.broadcast_to(v[:, _LANES - 1:], shape)
        closed = jnp.broadcast_to(seen[:, _LANES - 1:], shape)
        received, carry = _scan_rows(last, closed, carry_ref[...])
        out_ref[...] = jnp.where(seen == 0, v + received, v)
        carry_ref[...] = carry

    return body


def segment_gather(weights, indices, indptr, x, *, n, events, out_dtype, interpret, read_rows=True):
    """``y[i] = sum w[p] * x[indices[p]]`` over row ``i``'s entries ``indptr[i] <= p < indptr[i + 1]``
    (events: the weights where ``x`` has an event); rows of any length, ``indptr`` valid (repaired).

    ``weights`` is one per entry or ``(1,)`` shared; ``x`` is a vector, or a matrix whose columns run
    one after another (the layout and the rows' starts are made once). Indices outside ``[0, n)`` are
    dropped. Returns ``m = len(indptr) - 1`` rows. ``read_rows=False``: the rows' sums are gathered one
    value a row (in a ``lax.cond`` beside another product, libtpu took 12 s instead of 1 to compile the
    read of whole rows at 100,000 rows).

    Example (on a TPU; ``interpret=True`` runs Pallas's TPU interpreter):
        >>> indptr = jnp.array([0, 3, 3, 4], jnp.int32)
        >>> segment_gather(jnp.array([1., 2., 4., 8.]), jnp.array([0, 1, 2, 1], jnp.int32), indptr,
        ...                jnp.array([True, False, True]), n=3, events=True, out_dtype=jnp.float32,
        ...                interpret=True)
        Array([5., 0., 0.], dtype=float32)
    """
    nnz = indices.shape[0]
    homogeneous = weights.shape == (1,) and nnz != 1
    rows = -(-nnz // _LANES)
    if rows <= _BLOCK:  # one block, of whole vregs
        rows = block = -(-rows // 8) * 8
    else:  # entries filling whole layout rows are read in place; a last block past the end reads what is
        block = _BLOCK  # there, which no row's sum includes (the running sums only carry forward)
    idx = in_pieces(indices.astype(jnp.int32), -1, rows)
    starts, ends = indptr[:-1].astype(jnp.int32), indptr[1:].astype(jnp.int32)
    grid = pl.cdiv(rows, block)
    # Each block's rows, by where they start: a search of one value a block.
    bounds = search_sorted(starts, jnp.arange(grid + 1, dtype=jnp.int32) * (block * _LANES))
    held = in_pieces(starts, -1, max(8, -(-starts.shape[0] // (8 * _LANES)) * 8))
    w = weights.reshape(1).astype(jnp.float32) if homogeneous else \
        in_pieces(jnp.broadcast_to(weights, (nnz,)).astype(jnp.float32), 0, rows)
    tile = pl.BlockSpec((block, _LANES), lambda i, bounds: (i, 0))
    held_spec = pl.BlockSpec(held.shape, lambda i, bounds: (0, 0))

    def column(v):
        table = gather_table(v, events)
        table_spec = pl.BlockSpec((table.shape[0], _LANES), lambda i, bounds: (0, 0))
        if homogeneous:
            args = [w, table, idx, held]
            specs = [pl.BlockSpec(memory_space=pltpu.SMEM), table_spec, tile, held_spec]
        else:
            args, specs = [table, idx, w, held], [table_spec, tile, tile, held_spec]
        sums = pl.pallas_call(
            in_32_bits(_body(n=n, table_rows=table.shape[0], homogeneous=homogeneous, events=events)),
            out_shape=jax.ShapeDtypeStruct((rows, _LANES), jnp.float32),
            grid_spec=pltpu.PrefetchScalarGridSpec(
                num_scalar_prefetch=1, grid=(grid,), in_specs=specs, out_specs=tile,
                scratch_shapes=[pltpu.VMEM((1, _LANES), jnp.float32)]),
            # The running sum crosses blocks: they run in order.
            compiler_params=pltpu.CompilerParams(dimension_semantics=('arbitrary',)),
            interpret=tpu_interpret(interpret),
        )(bounds, *args)
        return jnp.where(ends > starts, _at_ends(sums, ends, read_rows), 0.0)

    return by_columns(column, x).astype(out_dtype)  # the sums are float32
