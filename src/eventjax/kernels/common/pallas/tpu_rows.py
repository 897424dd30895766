"""TPU (Mosaic) kernels over stored entries grouped in rows: what the CSR and FCN families share.

A matrix ``A`` (``shape=(m, n)``) stores, for row ``i``, entries with column
``indices[.]`` and weight ``data[.]`` (or one shared weight). The TPU has no
vector scatter, no atomics and no fast per-element gather, but a matrix unit
(MXU) that multiplies 128 x 128 tiles almost for free. Both directions are
therefore one-hot matrix products, with a target index ``t`` split as
``t = 128 * hi + lo`` so that a one-hot matrix costs ``n / 128 + 128``
compares per entry instead of ``n``:

- ``transpose=True`` (scatter ``x @ A``): the rows to visit are compacted in
  the kernel (event rows of a binary product; every row of a float one), each
  visited row's entries are fetched from HBM by a DMA driven by its row id,
  and the entries are added into a VMEM-resident ``(n / 128, 128)`` result as
  ``onehot_hi(coef) @ onehot_lo.T`` on the MXU.
- ``transpose=False`` (gather ``A @ x``): ``x`` stays in VMEM as a
  ``(128, n / 128)`` matrix; for a block of rows (one per lane) and entry
  slot ``j``, ``x.T @ onehot_hi`` gives each entry's 128-wide slice of ``x``
  and a sublane select picks ``x[t]``.

One-hot matrices are exact in any dtype, so the products are exact up to the
dtype's rounding of the sums. The MXU multiplies whole tiles, so a NaN or inf
weight (or value of ``x``) would reach the targets that share its tile: such
inputs take the ``jax`` kernel instead (a ``lax.cond`` on the data), which
keeps every result equal to the other backends'.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from eventjax.kernels.common.events import accumulation_dtype, event_indicator

__all__ = ['fcn_gather', 'fits_the_chip', 'row_scatter', 'tpu_interpret', 'with_finite_fallback']

_LANES = 128
# Rows fetched per DMA round in the scatter; two rounds are in flight.
_ROWS_PER_ROUND = 8
# Rows (lanes) per program of the gather.
_GATHER_BLOCK = 512


# What the kernels keep on the chip: the scatter's per-row scalars in SMEM (1 MiB) and its
# result in VMEM; the gather's x and one-hot blocks in VMEM. Larger problems take the jax kernel.
_SMEM_WORDS = 240_000
_MAX_SCATTER_TARGETS = 1_000_000
_MAX_GATHER_TARGETS = 200_000


def fits_the_chip(*, m: int, n: int, transpose: bool, csr: bool) -> bool:
    """Whether an ``(m, n)`` product's kernel fits the chip's on-core memories (else: the jax kernel).

    Example:
        >>> fits_the_chip(m=100_000, n=100_000, transpose=True, csr=True)
        True
        >>> fits_the_chip(m=100_000, n=1_000_000, transpose=False, csr=False)
        False
    """
    if not transpose:
        return n <= _MAX_GATHER_TARGETS
    return n <= _MAX_SCATTER_TARGETS and m * (2 if csr else 1) + m // 32 + 2 <= _SMEM_WORDS


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


def _dot_t(a, b, precise):
    """``a @ b.T`` on the MXU, full float32 precision when ``precise``."""
    return lax.dot_general(a, b, (((1,), (1,)), ((), ())), preferred_element_type=jnp.float32,
                           precision=_precision(precise))


def _dot(a, b, precise):
    return lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=jnp.float32,
                           precision=_precision(precise))


def _all_finite(*arrays):
    ok = jnp.asarray(True)
    for a in arrays:
        if a is not None and jnp.issubdtype(a.dtype, jnp.floating):
            ok = ok & jnp.all(jnp.isfinite(a))
    return ok


# ---------------------------------------------------------------------------------------------
# Scatter: y[indices[e]] += coef[e] over the entries of the visited rows.


def _scatter_body(*, m, n_entries, homogeneous, events, hi_rows, precise, fixed_rows):
    """Kernel body; refs: [starts,] flags/x (SMEM), weight (SMEM, homogeneous), idx, [w] (HBM), y, scratch."""
    rounds = _ROWS_PER_ROUND

    def body(*refs):
        refs = list(refs)
        starts_ref = None if fixed_rows else refs.pop(0)
        x_ref = refs.pop(0)
        wscalar_ref = refs.pop(0) if homogeneous else None
        idx_hbm = refs.pop(0)
        w_hbm = None if homogeneous else refs.pop(0)
        y_ref, ids_ref, idx_buf = refs[:3]
        w_buf = None if homogeneous else refs[3]
        sem = refs[-1]

        y_ref[...] = jnp.zeros(y_ref.shape, y_ref.dtype)
        if events:
            # Compact the event rows into SMEM: one scalar step per row.
            # The event flags arrive packed 32 to a word: SMEM holds 1 MiB.
            def collect(i, count):
                ids_ref[count] = i
                word = x_ref[lax.shift_right_logical(i, 5)]
                return count + lax.bitwise_and(lax.shift_right_logical(word, lax.bitwise_and(i, 31)), 1)
            count = lax.fori_loop(0, m, collect, jnp.int32(0))
        else:
            count = jnp.int32(m)

        def row_of(e):
            e = jnp.minimum(e, count - 1)
            return ids_ref[e] if events else e

        def copies(r, slot):
            out = []
            for g in range(rounds):
                row = row_of(r * rounds + g)
                src = row if fixed_rows else lax.shift_right_logical(starts_ref[row], 7)
                size = 1 if fixed_rows else 2
                out.append(pltpu.make_async_copy(idx_hbm.at[pl.ds(src, size)],
                                                 idx_buf.at[slot, pl.ds(g * size, size)], sem.at[0, slot]))
                if w_hbm is not None:
                    out.append(pltpu.make_async_copy(w_hbm.at[pl.ds(src, size)],
                                                     w_buf.at[slot, pl.ds(g * size, size)], sem.at[1, slot]))
            return out

        # lax.div, not //: Mosaic lowers // through sign, which asks for the device it compiles on.
        n_rounds = lax.div(count + (rounds - 1), jnp.int32(rounds))

        @pl.when(n_rounds > 0)
        def _():
            for c in copies(0, 0):
                c.start()

        hi_iota = lax.broadcasted_iota(jnp.int32, (hi_rows, 1), 0)
        lo_iota = lax.broadcasted_iota(jnp.int32, (_LANES, 1), 0)

        def one_round(r, carry):
            slot = lax.rem(r, 2)

            @pl.when(r + 1 < n_rounds)
            def _():
                for c in copies(r + 1, 1 - slot):
                    c.start()

            for c in copies(r, slot):
                c.wait()
            total = jnp.zeros(y_ref.shape, jnp.float32)
            for g in range(rounds):
                e = r * rounds + g
                row = row_of(e)
                if fixed_rows:
                    t = idx_buf[slot, pl.ds(g, 1), :]
                    keep = (t >= 0) & (t < n_entries)
                    w = wscalar_ref[0] if homogeneous else w_buf[slot, pl.ds(g, 1), :].astype(jnp.float32)
                else:
                    t = idx_buf[slot, pl.ds(2 * g, 2), :]
                    base = lax.shift_left(lax.shift_right_logical(starts_ref[row], 7), 7)
                    pos = base + lax.broadcasted_iota(jnp.int32, t.shape, 0) * _LANES + \
                        lax.broadcasted_iota(jnp.int32, t.shape, 1)
                    keep = (pos >= starts_ref[row]) & (pos < starts_ref[row + 1]) & (t >= 0) & (t < n_entries)
                    w = wscalar_ref[0] if homogeneous else w_buf[slot, pl.ds(2 * g, 2), :].astype(jnp.float32)
                coef = w if events else w * x_ref[row]
                coef = jnp.where(keep & (e < count), coef, 0.0)
                hi, lo = _split(t)
                for part in range(t.shape[0]):  # 1 row (FCN) or 2 aligned rows of 128 entries (CSR)
                    h, l_, c_ = hi[part:part + 1], lo[part:part + 1], coef[part:part + 1]
                    a = jnp.where(hi_iota == h, c_, 0.0)
                    b = (lo_iota == l_).astype(jnp.float32)
                    total = total + _dot_t(a, b, precise)
            y_ref[...] += total.astype(y_ref.dtype)
            return carry

        lax.fori_loop(0, n_rounds, one_round, 0)

    return body


def _packed_flags(x):
    """The events of ``x`` as bits, 32 to an int32 word (bit ``i % 32`` of word ``i // 32``)."""
    bits = event_indicator(x, jnp.uint32)
    bits = jnp.pad(bits, (0, -x.shape[0] % 32)).reshape(-1, 32)
    words = jnp.sum(jnp.left_shift(bits, jnp.arange(32, dtype=jnp.uint32)), axis=1, dtype=jnp.uint32)
    return lax.bitcast_convert_type(words, jnp.int32)


def row_scatter(weights, indices, x, *, n, events, out_dtype, interpret, starts=None):
    """``y[t] = sum coef`` over the entries of the rows of ``x``'s events (every row if not ``events``).

    FCN: ``indices`` and per-entry ``weights`` are ``(m, k)``. CSR: they are
    flat, laid out as ``(rows, 128)``, and ``starts`` (length ``m + 1``) gives
    each row's entries; a row's entries must fit in two aligned 128-wide rows,
    so rows longer than 128 entries are passed split (see the CSR family).
    ``weights`` of shape ``(1, 1)`` is one shared weight. Returns length ``n``.
    """
    m = x.shape[0]
    fixed_rows = starts is None
    acc = accumulation_dtype(out_dtype)
    homogeneous = weights.size == 1 and (not fixed_rows or weights.shape == (1, 1))
    hi_rows = max(1, pl.cdiv(n, _LANES))
    precise = acc == jnp.float32
    xs = _packed_flags(x) if events else x.astype(jnp.float32)
    body = _scatter_body(m=m, n_entries=n, homogeneous=homogeneous, events=events,
                         hi_rows=hi_rows, precise=precise, fixed_rows=fixed_rows)
    width = indices.shape[-1]
    per_row = 1 if fixed_rows else 2
    scalars = ([] if fixed_rows else [starts.astype(jnp.int32)]) + [xs]
    if homogeneous:
        scalars.append(weights.reshape(1).astype(jnp.float32))
    hbm = [indices.astype(jnp.int32)] + ([] if homogeneous else [weights.astype(jnp.float32)])
    scratch = [pltpu.SMEM((max(m, 1) if events else 1,), jnp.int32),
               pltpu.VMEM((2, _ROWS_PER_ROUND * per_row, width), jnp.int32)]
    if not homogeneous:
        scratch.append(pltpu.VMEM((2, _ROWS_PER_ROUND * per_row, width), jnp.float32))
    scratch.append(pltpu.SemaphoreType.DMA((2, 2)))
    y = pl.pallas_call(
        body, out_shape=jax.ShapeDtypeStruct((hi_rows, _LANES), acc),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=len(scalars), grid=(1,),
            in_specs=[pl.BlockSpec(memory_space=pl.ANY)] * len(hbm),
            out_specs=pl.BlockSpec((hi_rows, _LANES), lambda i, *_: (0, 0)),
            scratch_shapes=scratch),
        interpret=tpu_interpret(interpret),
    )(*scalars, *hbm)
    return y.reshape(-1)[:n].astype(out_dtype)


# ---------------------------------------------------------------------------------------------
# Gather: y[i] = sum_j coef(w[i, j], x[indices[i, j]]) with k entries per row.


def _gather_body(*, k, n, hi_rows, homogeneous, events, precise, mxu_dtype):
    def body(*refs):
        if homogeneous:
            w_ref, xt_ref, idx_ref, y_ref = refs
        else:
            xt_ref, idx_ref, w_ref, y_ref = refs
        block = y_ref.shape[1]
        hi_iota = lax.broadcasted_iota(jnp.int32, (hi_rows, block), 0)
        lo_iota = lax.broadcasted_iota(jnp.int32, (_LANES, block), 0)
        xt = xt_ref[...]

        def slot(j, total):
            t = idx_ref[pl.ds(j, 1), :]
            hi, lo = _split(t)
            onehot = (hi_iota == hi).astype(mxu_dtype)
            rows = _dot(xt, onehot, precise)  # (128, block): each entry's slice of x
            xv = jnp.sum(jnp.where(lo_iota == lo, rows, 0.0), axis=0, keepdims=True)
            keep = (t >= 0) & (t < n)
            w = w_ref[0] if homogeneous else w_ref[pl.ds(j, 1), :].astype(jnp.float32)
            term = jnp.where(xv > 0, w, 0.0) if events else w * xv
            return total + jnp.where(keep, term, 0.0)

        total = lax.fori_loop(0, k, slot, jnp.zeros((1, block), jnp.float32))
        y_ref[...] = total.astype(y_ref.dtype)
    return body


def fcn_gather(weights, indices, x, *, n, events, out_dtype, interpret):
    """``y[i] = sum_j w[i, j] * x[indices[i, j]]`` (events: the weights where ``x > 0``); length ``m``.

    ``indices`` and per-entry ``weights`` are ``(m, k)``; ``(1, 1)`` weights are shared.
    """
    m, k = indices.shape
    acc = accumulation_dtype(out_dtype)
    homogeneous = weights.shape == (1, 1) and not (m == 1 and k == 1)
    hi_rows = max(1, pl.cdiv(n, _LANES))
    block = min(_GATHER_BLOCK, pl.cdiv(m, _LANES) * _LANES)
    rows = pl.cdiv(m, block) * block
    if events:
        xv, mxu_dtype, precise = event_indicator(x, jnp.bfloat16), jnp.bfloat16, False
    else:
        precise = acc == jnp.float32
        xv, mxu_dtype = x.astype(jnp.float32), jnp.float32
    xt = jnp.pad(xv, (0, hi_rows * _LANES - n)).reshape(hi_rows, _LANES).T
    # Rows along lanes: entry slot j of 128 rows is one vector.
    idx_t = jnp.pad(indices.astype(jnp.int32).T, ((0, 0), (0, rows - m)), constant_values=-1)
    body = _gather_body(k=k, n=n, hi_rows=hi_rows, homogeneous=homogeneous, events=events, precise=precise,
                        mxu_dtype=mxu_dtype)
    grid = (rows // block,)
    xt_spec = pl.BlockSpec((_LANES, hi_rows), lambda i: (0, 0))
    col_spec = pl.BlockSpec((k, block), lambda i: (0, i))
    if homogeneous:
        args = [weights.reshape(1).astype(jnp.float32), xt, idx_t]
        specs = [pl.BlockSpec(memory_space=pltpu.SMEM), xt_spec, col_spec]
    else:
        w_t = jnp.pad(weights.astype(jnp.float32).T, ((0, 0), (0, rows - m)))
        args, specs = [xt, idx_t, w_t], [xt_spec, col_spec, col_spec]
    y = pl.pallas_call(
        body, out_shape=jax.ShapeDtypeStruct((1, rows), acc), grid=grid, in_specs=specs,
        out_specs=pl.BlockSpec((1, block), lambda i: (0, i)),
        compiler_params=pltpu.CompilerParams(dimension_semantics=('parallel',)),
        interpret=tpu_interpret(interpret),
    )(*args)
    return y[0, :m].astype(out_dtype)


def with_finite_fallback(kernel, fallback, *arrays_to_check):
    """Run ``kernel()`` when every float array given is finite, else ``fallback()`` (same result type)."""
    return lax.cond(_all_finite(*arrays_to_check), kernel, fallback)

