"""TPU (Mosaic) kernels over stored entries grouped in rows: what the CSR and FCN families share.

A matrix ``A`` (``shape=(m, n)``) stores, for row ``i``, entries with column
``indices[.]`` and weight ``data[.]`` (or one shared weight). The TPU has no
vector scatter and no atomics, but a matrix unit (MXU) that multiplies
128 x 128 tiles almost for free. The scatter ``x @ A`` (``transpose=True``)
is therefore a one-hot matrix product, with a target index ``t`` split as
``t = 128 * hi + lo`` so that a one-hot matrix costs ``n / 128 + 128``
compares per entry instead of ``n``: the rows to visit are compacted in the
kernel (event rows of a binary product; every row of a float one), each
visited row's entries are fetched from HBM by a DMA driven by its row id,
and the entries are added into a VMEM-resident ``(n / 128, 128)`` result as
``onehot_hi @ onehot_lo(coef).T`` on the MXU, in bfloat16 products: the
coefficients as three bfloat16 parts (see :func:`_onehot_product`), or as
counts for one shared weight of events. The gather ``A @ x`` is in
:mod:`eventjax.kernels.common.pallas.tpu_gather`.

One-hot matrices are exact in any dtype, so the products are exact up to
float32's rounding of the sums. The MXU multiplies whole tiles, so a NaN or inf
weight (or value of ``x``) would reach every target that shares its tile:
such entries go through the MXU as 0 and are added to their own targets one
by one afterwards, so every result equals the other backends'.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from eventjax.kernels.common.events import accumulation_dtype, event_indicator
from eventjax.kernels.common.pallas.tpu_pieces import in_32_bits, in_batches

__all__ = ['bf16_parts', 'compact_event_ids', 'dot', 'dot_t', 'fits_the_chip', 'one_program', 'packed_flags',
           'row_scatter', 'tpu_interpret', 'with_finite_fallback']

_LANES = 128
# Rows fetched per DMA batch in the scatter, two batches in flight, and rows that go through the MXU as one
# product (their entries side by side along lanes). Each product's result is popped from the MXU and added on
# the vector unit once per 128 lanes of the product, so rows of fewer than 128 entries packed without padding
# save pops: 16 rows of 100 are 13 such pieces, 16 in products of 4 rows of 128 lanes (26% fewer bundles in
# libtpu's compile of an FCN s @ W at 100,000 rows). Past _WIDE_PRODUCT_HI_ROWS result rows (131,072
# targets) the wide one-hot operand crowds VMEM, and rows of 128 entries gain nothing: the batches are the
# narrow ones there.
_WIDE_BATCH = (16, 16)
_NARROW_BATCH = (8, 4)
_WIDE_PRODUCT_HI_ROWS = 1024
# bfloat16 parts of a float32 coefficient (8 significant bits each): their sum is the coefficient.
_BF16_PARTS = 3


# What the kernels keep on the chip: the scatter's per-row scalars in SMEM (1 MiB) and its
# result in VMEM; the gather's x (as a table) and blocks of rows in VMEM. Larger problems take the jax kernel.
# Rows per scatter program, more run in blocks: a CSR row's start and compacted id take two words of SMEM, an
# FCN row's id one. libtpu keeps the scalars it spills in what SMEM the arrays leave; with too little left it
# spills them to HBM instead, each spill and fill a DMA waited for in the loop of rows, which made a CSR
# s @ W at 100,000 rows in one program 6x slower than the FCN one. In its compile for a v5e, 65,536 CSR rows
# (532 KB of arrays) and 150,000 FCN rows (620 KB) kept their scalars in SMEM; 81,920 CSR rows (664 KB) and
# 200,000 FCN rows (824 KB) did not.
_CSR_BLOCK_ROWS = 64 * 1024
_FCN_BLOCK_ROWS = 128 * 1024
# The scatter's result and a product's operands in VMEM: 524,288 targets compile for a v5e, 620,000 did not.
_MAX_SCATTER_TARGETS = 524_288
_MAX_GATHER_TARGETS = 200_000
# Beyond this many entries per row even 8 rows of a gather crowd VMEM.
_MAX_GATHER_ENTRIES_PER_ROW = 16_384


def fits_the_chip(*, n: int, transpose: bool, k: int = 0) -> bool:
    """Whether a product with ``n`` columns has a kernel that fits the chip's on-core memories (else: the jax
    kernel); rows beyond what SMEM holds run in blocks of rows.

    ``k``: the entries per row of a gather (``transpose=False``).

    Example:
        >>> fits_the_chip(n=100_000, transpose=True)
        True
        >>> fits_the_chip(n=1_000_000, transpose=True)
        False
        >>> fits_the_chip(n=1_000_000, transpose=False, k=100)
        False
    """
    if not transpose:
        return n <= _MAX_GATHER_TARGETS and k <= _MAX_GATHER_ENTRIES_PER_ROW
    return n <= _MAX_SCATTER_TARGETS


def tpu_interpret(interpret: bool):
    """The ``interpret`` argument of a TPU ``pallas_call``: Pallas's TPU interpreter, which models
    SMEM, DMAs and semaphores, for ``interpret=True``; ``False`` compiles with Mosaic, and interpreter
    parameters of the caller's own pass through."""
    return pltpu.InterpretParams() if interpret is True else interpret


def _split(t):
    return lax.shift_right_arithmetic(t, 7), lax.bitwise_and(t, _LANES - 1)


def _precision(precise):
    # Explicit both ways: a user's jax.default_matmul_precision('highest') must not
    # reach the bfloat16 products, which Mosaic then refuses.
    return lax.Precision.HIGHEST if precise else lax.Precision.DEFAULT


def dot_t(a, b, precise):
    """``a @ b.T`` on the MXU, full float32 precision when ``precise``."""
    return lax.dot_general(a, b, (((1,), (1,)), ((), ())), preferred_element_type=jnp.float32,
                           precision=_precision(precise))


def dot(a, b, precise):
    """``a @ b`` on the MXU, full float32 precision when ``precise``."""
    return lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=jnp.float32,
                           precision=_precision(precise))


def _all_finite(*arrays):
    ok = jnp.asarray(True)
    for a in arrays:
        if a is not None and jnp.issubdtype(a.dtype, jnp.floating):
            ok = ok & jnp.all(jnp.isfinite(a))
    return ok


def with_finite_fallback(kernel, fallback, *arrays_to_check):
    """Run ``kernel()`` when every float array given is finite, else ``fallback()`` (same result type)."""
    return lax.cond(_all_finite(*arrays_to_check), kernel, fallback)


def _as_int32(bits):
    return bits - (1 << 32) if bits >= 1 << 31 else bits


# Masks whose test against a single set bit reads off that bit's position, one binary digit each.
_BIT_DIGITS = tuple((_as_int32(mask), digit) for mask, digit in
                    ((0xFFFF0000, 16), (0xFF00FF00, 8), (0xF0F0F0F0, 4), (0xCCCCCCCC, 2), (0xAAAAAAAA, 1)))


def compact_event_ids(flags_ref, ids_ref, n_words):
    """Write the ids of the set bits of ``flags_ref[:n_words]`` (32 events to a word) to ``ids_ref``; their count.

    Scalar code: a step per word, and a few steps per event rather than one per row, so sparse events
    cost little.
    """
    def word_step(w, count):
        def has_bits(carry):
            return carry[0] != 0

        def take_lowest(carry):
            word, count = carry
            lowest = lax.bitwise_and(word, jnp.int32(0) - word)
            bit = jnp.int32(0)
            for mask, digit in _BIT_DIGITS:
                bit = bit + jnp.where(lax.bitwise_and(lowest, jnp.int32(mask)) != 0, jnp.int32(digit), 0)
            ids_ref[count] = lax.shift_left(w, 5) + bit
            return lax.bitwise_xor(word, lowest), count + 1

        return lax.while_loop(has_bits, take_lowest, (flags_ref[w], count))[1]

    return lax.fori_loop(0, n_words, word_step, jnp.int32(0))


# ---------------------------------------------------------------------------------------------
# Scatter: y[indices[e]] += coef[e] over the entries of the visited rows.


def _batch_rows(hi_rows, width):
    """(rows per DMA batch, rows per MXU product) of a scatter into ``hi_rows`` result rows of 128, for rows
    of ``width`` lanes."""
    return _WIDE_BATCH if hi_rows <= _WIDE_PRODUCT_HI_ROWS and width < _LANES else _NARROW_BATCH


def _scatter_body(*, m, n_entries, homogeneous, events, hi_rows, precise, fixed_rows, layout_rows, width):
    """Kernel body; refs: starts (CSR) or first row (FCN), flags/x, weight (homogeneous) in SMEM; idx, [w]
    (HBM); y; scratch.

    ``layout_rows``: the rows of ``idx``. CSR: of its 128-wide layout (at least 2); a row's two-row window
    starts at most at the last but one, so the layout needs no padding row (and no copy) past its entries.
    FCN: row ``i`` of the program is row ``first + i`` of ``idx``, which is clamped to it (a block's rows
    past the matrix carry no events and values 0).
    """
    batches, product_rows = _batch_rows(hi_rows, width)
    # Shared weight, events: each product counts the entries per target; the weight multiplies once at the end.
    counting = homogeneous and events and precise

    def body(*refs):
        refs = list(refs)
        starts_ref = refs.pop(0)  # or the FCN block's first row
        x_ref = refs.pop(0)
        wscalar_ref = refs.pop(0) if homogeneous else None
        idx_hbm = refs.pop(0)
        w_hbm = None if homogeneous else refs.pop(0)
        y_ref, ids_ref, idx_buf = refs[:3]
        w_buf = None if homogeneous else refs[3]
        sem = refs[-1]

        y_ref[...] = jnp.zeros(y_ref.shape, y_ref.dtype)
        if events:
            count = compact_event_ids(x_ref, ids_ref, pl.cdiv(m, 32))
        else:
            count = jnp.int32(m)

        def row_of(e):
            e = jnp.minimum(e, count - 1)
            return ids_ref[e] if events else e

        def copies(r, slot):
            out = []
            for g in range(batches):
                row = row_of(r * batches + g)
                if fixed_rows:
                    src = jnp.minimum(starts_ref[0] + row, layout_rows - 1)
                else:
                    src = jnp.minimum(lax.shift_right_logical(starts_ref[row], 7), layout_rows - 2)
                size = 1 if fixed_rows else 2
                out.append(pltpu.make_async_copy(idx_hbm.at[pl.ds(src, size)],
                                                 idx_buf.at[slot, pl.ds(g * size, size)], sem.at[0, slot]))
                if w_hbm is not None:
                    out.append(pltpu.make_async_copy(w_hbm.at[pl.ds(src, size)],
                                                     w_buf.at[slot, pl.ds(g * size, size)], sem.at[1, slot]))
            return out

        # lax.div, not //: Mosaic lowers // through sign, which asks for the device it compiles on.
        n_batches = lax.div(count + (batches - 1), jnp.int32(batches))
        hi_iota = lax.broadcasted_iota(jnp.int32, (hi_rows, 1), 0)
        lo_iota = lax.broadcasted_iota(jnp.int32, (_LANES, 1), 0)

        def one_batch(r, slot):
            rows_t, rows_coef, targets, coefs = [], [], [], []
            for g in range(batches):
                e = r * batches + g
                row = row_of(e)
                if fixed_rows:
                    t = idx_buf[slot, pl.ds(g, 1), :]
                    keep = (t >= 0) & (t < n_entries)
                    w = None if homogeneous else w_buf[slot, pl.ds(g, 1), :].astype(jnp.float32)
                else:
                    start = starts_ref[row]
                    # A window in the layout's last row was fetched with the row before it.
                    last = lax.shift_right_logical(start, 7) > layout_rows - 2
                    t, lane = _row_window(idx_buf[slot, pl.ds(2 * g, 2), :], start, last)
                    t, lane = t[:, :width], lane[:, :width]
                    keep = (lane < starts_ref[row + 1] - start) & (t >= 0) & (t < n_entries)
                    w = None if homogeneous else _row_window(w_buf[slot, pl.ds(2 * g, 2), :], start, last)[0][:, :width]
                keep = keep & (e < count)
                if counting:
                    coef = keep.astype(jnp.float32)
                else:
                    w = wscalar_ref[0] if homogeneous else w
                    coef = jnp.where(keep, w if events else w * x_ref[row], 0.0)
                    targets.append(t)
                    coefs.append(coef)
                rows_t.append(t)
                rows_coef.append(coef)
            # The rows' entries side by side along lanes, one product per product_rows rows: the MXU sums
            # them, and rows of fewer than 128 entries (an FCN row of 100) leave no lanes of padding between.
            total = None
            for p in range(0, batches, product_rows):
                t = jnp.concatenate(rows_t[p:p + product_rows], axis=1)
                coef = jnp.concatenate(rows_coef[p:p + product_rows], axis=1)
                hi, lo = _split(t)
                finite = jnp.where(jnp.isfinite(coef), coef, 0.0)
                part = _onehot_product(hi_iota == hi, lo_iota == lo, finite, precise=precise, counting=counting)
                total = part if total is None else total + part
            y_ref[...] += total.astype(y_ref.dtype)
            if not counting:
                _add_non_finite(y_ref, jnp.concatenate(targets, axis=0), jnp.concatenate(coefs, axis=0))

        in_batches(n_batches, copies, one_batch)
        if counting:
            # One rounding per target (the weight times an exact count); the other backends add the weight
            # once per entry, so results differ by a few float32 ulps where a target gets many entries.
            w = wscalar_ref[0]
            y_ref[...] = jnp.where(y_ref[...] > 0, y_ref[...] * w, 0.0).astype(y_ref.dtype)

    return body


def _row_window(pair, start, last):
    """The 128 entries from flat position ``start`` on, out of ``pair``: the two aligned 128-wide rows the
    first of them falls in (``last``: the row before and the layout's last row, whose window ends with the
    entries); and the lane index. A row of at most 128 entries then takes one row of the one-hot products,
    not the two it straddles."""
    pair = jnp.where(last, jnp.broadcast_to(pair[1:2], pair.shape), pair)
    offset = lax.bitwise_and(start, _LANES - 1)
    # Lane l of the window is lane offset + l of the pair: a rotation left by offset, then row 1 past its end.
    rolled = pltpu.roll(pair, lax.bitwise_and(_LANES - offset, _LANES - 1), 1)
    lane = lax.broadcasted_iota(jnp.int32, (1, _LANES), 1)
    return jnp.where(lane < _LANES - offset, rolled[0:1], rolled[1:2]), lane


def bf16_parts(x):
    """``x`` (float32) as ``_BF16_PARTS`` float32 arrays, each a bfloat16 value, whose sum is ``x`` for normal
    floats (8 significant bits each): a product of them in single bfloat16 passes gives the float32 sum.

    Example:
        >>> x = jnp.float32(1 / 3)
        >>> parts = bf16_parts(x)
        >>> [bool(p == p.astype(jnp.bfloat16).astype(p.dtype)) for p in parts]
        [True, True, True]
        >>> bool(parts[0] + parts[1] + parts[2] == x)
        True
    """
    parts = []
    for _ in range(_BF16_PARTS):
        part = x.astype(jnp.bfloat16).astype(jnp.float32)
        parts.append(part)
        x = x - part
    return parts


def _onehot_product(hi_hit, lo_hit, coef, *, precise, counting):
    """``sum_e [hi_e == h] * coef_e * [lo_e == l]`` over a batch's entries, as a ``(hi_rows, 128)`` float32
    block: ``hi_hit`` is ``hi_iota == hi``, ``lo_hit`` is ``lo_iota == lo``; ``coef`` finite.

    The one-hot factors are exact in bfloat16, so only the coefficients need float32. A float32
    coefficient is three bfloat16 parts whose sum is exact (8 significant bits each, and what the first
    parts leave is exact in float32), so three single-pass bfloat16 products on the MXU (the parts side
    by side along the result's lanes) give what one ``Precision.HIGHEST`` product (six passes) gives.
    Counts (0/1 coefficients) take one pass.
    """
    a = hi_hit.astype(jnp.bfloat16)
    if counting:
        return dot_t(a, (lo_hit.astype(jnp.float32) * coef).astype(jnp.bfloat16), False)
    if not precise:
        return dot_t(a.astype(jnp.float32), jnp.where(lo_hit, coef, 0.0), False)
    ones = lo_hit.astype(jnp.float32)
    parts = [ones * part for part in bf16_parts(coef)]
    out = dot_t(a, jnp.concatenate(parts, axis=0).astype(jnp.bfloat16), False)
    return sum(out[:, j * _LANES:(j + 1) * _LANES] for j in range(_BF16_PARTS))


def _add_non_finite(y_ref, t, coef):
    """``y[t] += coef`` for the entries whose ``coef`` is NaN or inf, one at a time on the vector unit.

    The MXU gets those entries as 0 (a NaN times the zeros of a one-hot row would reach every target the
    row shares); here each reaches only its own target, so the result is IEEE's whatever the order. Rare:
    a batch with none costs one reduction.
    """
    special = jnp.logical_not(jnp.isfinite(coef))

    @pl.when(jnp.any(special))
    def _():
        hi_iota = lax.broadcasted_iota(jnp.int32, y_ref.shape, 0)
        lo_iota = lax.broadcasted_iota(jnp.int32, y_ref.shape, 1)

        def entry(j, carry):
            # Lane j of every row, in every lane: a lane gather with a constant index.
            lane = jnp.full(t.shape, j, jnp.int32)
            tj = jnp.take_along_axis(t, lane, axis=1, mode='promise_in_bounds')
            cj = jnp.take_along_axis(jnp.where(special, coef, 0.0), lane, axis=1, mode='promise_in_bounds')
            hi, lo = _split(tj)
            add = jnp.zeros(y_ref.shape, jnp.float32)
            for row in range(t.shape[0]):
                hit = (hi_iota == hi[row:row + 1, :1]) & (lo_iota == lo[row:row + 1, :1])
                add = add + jnp.where(hit, cj[row:row + 1, :1], 0.0)
            y_ref[...] = (y_ref[...].astype(jnp.float32) + add).astype(y_ref.dtype)
            return carry

        lax.fori_loop(0, t.shape[1], entry, 0)


def packed_flags(x):
    """The events of ``x`` as bits, 32 to an int32 word (bit ``i % 32`` of word ``i // 32``)."""
    bits = event_indicator(x, jnp.uint32)
    bits = jnp.pad(bits, (0, -x.shape[0] % 32)).reshape(-1, 32)
    words = jnp.sum(jnp.left_shift(bits, jnp.arange(32, dtype=jnp.uint32)), axis=1, dtype=jnp.uint32)
    return lax.bitcast_convert_type(words, jnp.int32)


def row_scatter(weights, indices, x, *, n, events, out_dtype, interpret, starts=None, first_row=0,
                row_width=_LANES):
    """``y[t] = sum coef`` over the entries of the rows of ``x``'s events (every row if not ``events``).

    FCN: ``indices`` and per-entry ``weights`` are ``(m, k)``. CSR: they are
    flat, laid out as ``(rows, 128)`` with ``rows >= 2``, and ``starts`` (length ``m + 1``) gives
    each row's entries; a row holds at most 128 entries, so longer rows are
    passed cut into pieces (see the CSR family); ``row_width``, when every row holds at most that many
    entries, packs the rows that many lanes apart. Rows beyond what SMEM holds
    run in blocks, one program after another (FCN: ``x`` is rows
    ``first_row, ...`` of ``indices``).
    ``weights`` of shape ``(1, 1)`` is one shared weight. Returns length ``n``.
    """
    m = x.shape[0]
    fixed_rows = starts is None
    if m > (_FCN_BLOCK_ROWS if fixed_rows else _CSR_BLOCK_ROWS):
        return _in_row_blocks(weights, indices, x, starts, n=n, events=events, out_dtype=out_dtype,
                              interpret=interpret, row_width=row_width)
    acc = accumulation_dtype(out_dtype)
    homogeneous = weights.size == 1 and (not fixed_rows or weights.shape == (1, 1))
    hi_rows = max(1, pl.cdiv(n, _LANES))
    precise = acc == jnp.float32
    xs = packed_flags(x) if events else x.astype(jnp.float32)
    width = indices.shape[-1]
    row_lanes = width if fixed_rows else row_width  # lanes a row takes in a product
    body = _scatter_body(m=m, n_entries=n, homogeneous=homogeneous, events=events, hi_rows=hi_rows,
                         precise=precise, fixed_rows=fixed_rows, layout_rows=indices.shape[0], width=row_lanes)
    per_row = 1 if fixed_rows else 2
    lead = jnp.reshape(first_row, (1,)) if fixed_rows else starts
    scalars = [jnp.asarray(lead, jnp.int32), xs]
    if homogeneous:
        scalars.append(weights.reshape(1).astype(jnp.float32))
    hbm = [indices.astype(jnp.int32)] + ([] if homogeneous else [weights.astype(jnp.float32)])
    batch = _batch_rows(hi_rows, row_lanes)[0] * per_row
    scratch = [pltpu.SMEM((max(m, 1) if events else 1,), jnp.int32), pltpu.VMEM((2, batch, width), jnp.int32)]
    if not homogeneous:
        scratch.append(pltpu.VMEM((2, batch, width), jnp.float32))
    scratch.append(pltpu.SemaphoreType.DMA((2, 2)))
    y = one_program(body, hi_rows=hi_rows, dtype=acc, scalars=scalars, hbm=hbm, scratch=scratch,
                    interpret=interpret)
    return y.reshape(-1)[:n].astype(out_dtype)


def _in_row_blocks(weights, indices, x, starts, *, n, events, out_dtype, interpret, row_width):
    """:func:`row_scatter` over blocks of ``_CSR_BLOCK_ROWS`` (FCN: ``_FCN_BLOCK_ROWS``) rows in turn, the
    results added; the rows past ``m`` are empty and without events."""
    m, size = x.shape[0], _FCN_BLOCK_ROWS if starts is None else _CSR_BLOCK_ROWS
    blocks = pl.cdiv(m, size)
    xs = jnp.pad(x, (0, blocks * size - m))
    starts = None if starts is None else jnp.pad(starts, (0, blocks * size - m), mode='edge')
    acc = accumulation_dtype(out_dtype)

    def block(b):  # slices, not a gather of every block's starts (an XLA gather costs a TPU far more)
        first = b * size
        part = lax.dynamic_slice(xs, (first,), (size,))
        if starts is None:
            return row_scatter(weights, indices, part, n=n, events=events, out_dtype=acc, interpret=interpret,
                               first_row=first)
        return row_scatter(weights, indices, part, n=n, events=events, out_dtype=acc, interpret=interpret,
                           starts=lax.dynamic_slice(starts, (first,), (size + 1,)), row_width=row_width)

    return jnp.sum(lax.map(block, jnp.arange(blocks, dtype=jnp.int32)), axis=0).astype(out_dtype)


def one_program(body, *, hi_rows, dtype, scalars, hbm, scratch, interpret):
    """``body`` as one program: ``scalars`` prefetched to SMEM, ``hbm`` left in HBM for the body's DMAs,
    and the result a VMEM-resident ``(hi_rows, 128)`` block of ``dtype``."""
    return pl.pallas_call(
        in_32_bits(body), out_shape=jax.ShapeDtypeStruct((hi_rows, _LANES), dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=len(scalars), grid=(1,),
            in_specs=[pl.BlockSpec(memory_space=pl.ANY)] * len(hbm),
            out_specs=pl.BlockSpec((hi_rows, _LANES), lambda i, *_: (0, 0)),
            scratch_shapes=scratch),
        interpret=tpu_interpret(interpret),
    )(*scalars, *hbm)
