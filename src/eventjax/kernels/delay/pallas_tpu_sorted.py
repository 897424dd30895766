"""TPU (Mosaic) delivery into large rings: the update's synapses sorted by target, a small product per piece.

A one-hot product adds 128 synapses into a block of the ring: the whole
ring (:mod:`~eventjax.kernels.delay.pallas_tpu`) costs ``L * n / 128`` rows
a product, one slot ``n / 128``, and most of those rows receive nothing.
Here the update's synapses are first listed by XLA (each event row read as
one window, the ``jax`` kernel's passes of :mod:`~eventjax.kernels.delay.jax_impl`)
as ``(target, coefficient)`` pairs, the target in the ring with ``n``
padded to 128 columns, and sorted by target. An update of ~100,000
synapses into a ring of a few million entries then puts ``PIECE`` sorted
targets within a few hundred rows of 128: each piece is added by one
one-hot product per ``WINDOW`` rows it spans (windows laid out by XLA from
the sorted keys), the product ``WINDOW x PIECE`` by ``PIECE x 384``.

- The window's one-hot factor is exact in bfloat16; the coefficients go in
  three bfloat16 parts side by side (``w1 = bf16(w)``, ``w2 = bf16(w -
  w1)``, ``w3 = bf16(w - w1 - w2)``, whose sum is ``w`` for normal
  floats), so one single-pass product gives the float32 sum.
- The padded ring is copied into VMEM once a pass and back by DMA (the
  call updates it in place); the sorted pairs are read whole.
- A pass whose terms hold NaN or inf is added by XLA's scatter instead (a
  non-finite term would reach every target of its product): only the
  update's terms are checked, never all the weights.
- Rows of 1,024 synapses and more on average, stored in whole tiles of 1,024
  (``nnz`` a multiple of 1,024), are listed by tiles: each pass reads the
  next ``budget`` tiles that the event rows span (one gather of whole
  tiles an array, each entry masked to its row), so a pass sorts about a
  row's length plus one tile a row, where reading each row through a
  window of twice the mean length sorted twice the mean, and a long row
  takes no pass of its own.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from eventjax.kernels.common.compaction import running_count
from eventjax.kernels.common.pallas.tpu_pieces import in_32_bits, search_sorted
from eventjax.kernels.common.pallas.tpu_rows import bf16_parts, dot_t, tpu_interpret
from eventjax.kernels.delay import jax_impl, reference
from eventjax.kernels.delay.pallas_tpu_operands import as_int32

__all__ = ['MAX_BLOCK_BYTES', 'PIECE', 'TILE', 'WINDOW', 'SortedSink', 'add_sorted', 'block_rows', 'deliver',
           'fits_the_chip', 'padded_columns']

_LANES = 128
# Sorted targets a product takes, and the rows of 128 targets its window covers.
PIECE = 512
WINDOW = 256
# Event rows a pass lists (and sorts), and the most entries a pass may list.
PASS_ROWS = 32
PASS_ENTRIES = 262_144
# Stored synapses a TPU tile of 32-bit values holds, (8, 128): what the tile listing reads at a time.
TILE = 1024
# The padded ring's VMEM (a v5e core has 128 MiB).
MAX_BLOCK_BYTES = 64 * 2 ** 20
_VMEM_HEADROOM = 24 * 2 ** 20


def padded_columns(n: int) -> int:
    """The ring's columns as the kernel holds them: ``n`` rounded up to a multiple of 128.

    Example:
        >>> padded_columns(77_169), padded_columns(128)
        (77184, 128)
    """
    return -(-max(n, 1) // _LANES) * _LANES


def _body(*, rows, window, precise):
    """Refs: each piece's first window row and window count (SMEM); keys, coefs (VMEM, ``(P, piece)``); the
    padded ring in and out (HBM, aliased); its VMEM copy; a DMA semaphore."""
    def body(count_ref, base_ref, windows_ref, keys_ref, coefs_ref, ring_hbm, out_hbm, y_ref, sem):
        copy_in = pltpu.make_async_copy(ring_hbm, y_ref, sem)
        copy_in.start()
        lo_iota = lax.broadcasted_iota(jnp.int32, (_LANES, 1), 0)
        win_iota = lax.broadcasted_iota(jnp.int32, (window, 1), 0)

        def one_piece(p, carry):
            key = keys_ref[pl.ds(p, 1), :]
            coef = coefs_ref[pl.ds(p, 1), :]
            row = lax.shift_right_logical(key, 7)
            hit_lo = (lo_iota == lax.bitwise_and(key, _LANES - 1)) & (row < rows)  # the sentinel: no synapse
            if precise == 'highest':
                b = jnp.where(hit_lo, coef, 0.0)
            else:
                b = jnp.concatenate([jnp.where(hit_lo, q, 0.0).astype(jnp.bfloat16) for q in bf16_parts(coef)],
                                    axis=0)
            first = base_ref[p]

            def one_window(j, carry):
                # The windows were laid out from the sorted keys beforehand: no reduction to a scalar here.
                base = first + j * window
                at = jnp.minimum(base, rows - window)
                a = (win_iota == row - at) & (row >= base) & (row < base + window)
                if precise == 'highest':
                    out = dot_t(a.astype(jnp.float32), b, True)
                else:
                    out = dot_t(a.astype(jnp.bfloat16), b, False)
                    out = out[:, :_LANES] + out[:, _LANES:2 * _LANES] + out[:, 2 * _LANES:]
                y_ref[pl.ds(pl.multiple_of(at, 8), window), :] += out
                return carry

            return lax.fori_loop(0, windows_ref[p], one_window, carry)

        copy_in.wait()
        lax.fori_loop(0, count_ref[0], one_piece, 0)
        copy_out = pltpu.make_async_copy(y_ref, out_hbm, sem)
        copy_out.start()
        copy_out.wait()

    return body


def add_sorted(block, keys, coefs, *, piece=PIECE, window=WINDOW, precise='parts', interpret=False):
    """``block.flat[keys] += coefs`` for ``keys`` sorted ascending from 0 (``block.size`` and past: no synapse).

    ``block``: float32 ``(rows, 128)``, ``rows`` a multiple of 8 (a window
    of more rows takes ``rows``); updated in place when donated. ``keys``
    int32 and ``coefs`` float32, of one length, finite coefficients;
    ``precise``: ``'parts'`` or ``'highest'``.

    Example:
        >>> block = jnp.zeros((8, 128), jnp.float32)
        >>> out = add_sorted(block, jnp.array([3, 3, 130, 5000], jnp.int32), jnp.array([1., 2., 4., 8.]),
        ...                  interpret=True)
        >>> out[0, 3], out[1, 2], float(out.sum())
        (Array(3., dtype=float32), Array(4., dtype=float32), 7.0)
    """
    if precise not in ('parts', 'highest'):
        raise ValueError(f"add_sorted(): precise must be 'parts' or 'highest', got {precise!r}.")
    rows = block.shape[0]
    window = min(window, rows)
    total = keys.shape[0]
    pieces = max(1, -(-total // piece))
    pad = pieces * piece - total
    sentinel = rows * _LANES
    keys = jnp.minimum(keys, sentinel)
    if pad:
        keys = jnp.concatenate([keys, jnp.full((pad,), sentinel, jnp.int32)])
        coefs = jnp.concatenate([coefs, jnp.zeros((pad,), jnp.float32)])
    live = jnp.sum(keys < sentinel, dtype=jnp.int32)
    used = (live + (piece - 1)) // piece
    keys, coefs = keys.reshape(pieces, piece), coefs.reshape(pieces, piece)
    # Each piece's windows: from its first row (rounded down to 8) on, as many as reach its last live row.
    first = keys[:, 0] // (8 * _LANES) * 8
    last_at = jnp.clip(jnp.arange(pieces, dtype=jnp.int32) * piece + piece - 1, 0, jnp.maximum(live - 1, 0))
    last = jnp.minimum(keys.reshape(-1)[last_at], sentinel - 1) // _LANES
    windows = jnp.where(jnp.arange(pieces, dtype=jnp.int32) < used, (last - first) // window + 1, 0).astype(jnp.int32)
    body = _body(rows=rows, window=window, precise=precise)
    whole = lambda shape: pl.BlockSpec(shape, lambda i, *_: (0, 0))  # noqa: E731
    return pl.pallas_call(
        in_32_bits(body), out_shape=jax.ShapeDtypeStruct(block.shape, jnp.float32),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=3, grid=(1,),
            in_specs=[whole(keys.shape), whole(coefs.shape), pl.BlockSpec(memory_space=pl.ANY)],
            out_specs=pl.BlockSpec(memory_space=pl.ANY),
            scratch_shapes=[pltpu.VMEM(block.shape, jnp.float32), pltpu.SemaphoreType.DMA(())]),
        input_output_aliases={5: 0},
        compiler_params=pltpu.CompilerParams(vmem_limit_bytes=block.size * 4 + 4 * keys.size * 4 + _VMEM_HEADROOM),
        interpret=tpu_interpret(interpret),
    )(used.reshape(1), first, windows, keys, coefs, block)


class SortedSink:
    """The ``jax`` kernel's passes (:mod:`~eventjax.kernels.delay.jax_impl`) with each pass's terms sorted by
    target and added by :func:`add_sorted` into the ring held with ``n`` padded to 128 columns.

    ``precise``: ``'parts'`` (three bfloat16 parts) or ``'highest'``
    (float32 products); ``pass_rows``: event rows a pass lists; ``tiles``:
    list the rows by whole tiles (:func:`deliver`): ``None`` where the mean
    row holds at least a tile and the synapses fill whole tiles, or
    ``True`` / ``False``.
    """

    def __init__(self, length, n, *, pass_rows=PASS_ROWS, piece=PIECE, window=WINDOW, precise='parts',
                 tiles=None, interpret=False):
        self.length, self.n, self.pass_rows, self.tiles = length, n, pass_rows, tiles
        self.piece, self.window, self.precise, self.interpret = piece, window, precise, interpret
        self.columns = padded_columns(n)
        self.block_rows = block_rows(n, length)

    def rows(self, width):
        return max(1, min(self.pass_rows, PASS_ENTRIES // max(width, 1)))

    def width(self, mean):
        """Twice the mean row length: each pass sorts its entries and copies the ring in and out of VMEM, so a
        row longer than 1.25x the mean (PD14's inhibitory rows of L2/3 and L4, a fifth of its spikes) costing
        a second pass of that size each update cost more than the wider pass's padding."""
        return -(-(2 * mean) // 8) * 8

    def tile_budget(self, nnz, m):
        """Tiles a pass of the tile listing reads (``None``: no tile listing): ``pass_rows`` mean rows, each
        with the tile it straddles, at most ``PASS_ENTRIES`` entries.

        Example:
            >>> SortedSink(64, 77_184).tile_budget(298_881_024, 77_169), SortedSink(8, 100).tile_budget(4096, 40)
            (160, None)
        """
        mean = -(-nnz // max(m, 1))
        if nnz == 0 or nnz % TILE or m == 0 or self.tiles is False or (self.tiles is None and mean < TILE):
            return None
        return max(1, min(self.pass_rows * (-(-mean // TILE) + 1), PASS_ENTRIES // TILE))

    def start(self, flat_ring):
        ring = flat_ring.astype(jnp.float32).reshape(self.length, self.n)
        if self.columns != self.n:
            ring = jnp.pad(ring, ((0, 0), (0, self.columns - self.n)))
        ring = ring.reshape(-1, _LANES)
        extra = self.block_rows - ring.shape[0]
        return jnp.pad(ring, ((0, extra), (0, 0))) if extra else ring

    def add(self, block, flat, terms):
        length, n = self.length, self.n
        flat, terms = flat.reshape(-1), terms.reshape(-1).astype(jnp.float32)
        keys = flat if self.columns == n else flat + (flat // n) * (self.columns - n)
        keys = jnp.where(flat < length * n, keys, block.size).astype(jnp.int32)

        def kernel():
            return self.add_terms(block, keys, terms)

        def scatter():  # NaN or inf among the terms: each reaches its own target only
            return block.reshape(-1).at[keys].add(terms, mode='drop').reshape(block.shape)

        return lax.cond(jnp.all(jnp.isfinite(terms)), kernel, scatter)

    def add_terms(self, block, keys, terms):
        """The finite terms of a pass added at ``keys`` (``block.size``: none): sorted, then :func:`add_sorted`."""
        keys, terms = lax.sort((keys, terms), num_keys=1, is_stable=False)
        return add_sorted(block, keys, terms, piece=self.piece, window=self.window, precise=self.precise,
                          interpret=self.interpret)

    def finish(self, block):
        ring = block.reshape(-1)[:self.length * self.columns].reshape(self.length, self.columns)
        return (ring if self.columns == self.n else ring[:, :self.n]).reshape(-1)


def block_rows(n: int, length: int) -> int:
    """Rows of 128 the kernel holds the ring in: ``length`` slots of ``n`` padded to 128, then to 8 rows.

    Example:
        >>> block_rows(77_169, 64), block_rows(5, 3)
        (38592, 8)
    """
    return -(-length * padded_columns(n) // (8 * _LANES)) * 8


def fits_the_chip(*, n: int, length: int) -> bool:
    """Whether the padded ring fits the kernel's VMEM (else: the jax kernel).

    Example:
        >>> fits_the_chip(n=77_169, length=64)
        True
        >>> fits_the_chip(n=1_000_000, length=64)
        False
    """
    return block_rows(n, length) * _LANES * 4 <= MAX_BLOCK_BYTES


def deliver(ring, events, data, columns, delays, indptr, t, *, shape, weighted, interpret, **options):
    """The ring after delivering the synapses of ``events``' rows through this kernel (float32 or float16 rings
    passing :func:`fits_the_chip`); ``delays`` None: ``columns`` are a layout's packed offsets; ``options``:
    :class:`SortedSink`'s."""
    length, n = ring.shape[0], shape[1]
    sink = SortedSink(length, n, interpret=interpret, **options)
    # The passes index in int32, as the kernel does (structure past 2**31 entries takes the jax kernel).
    columns = as_int32(columns, length * n if delays is None else n)
    delays = None if delays is None else as_int32(delays, length)
    indptr, t = indptr.astype(jnp.int32), jnp.mod(t, length).astype(jnp.int32)
    budget = sink.tile_budget(columns.shape[0], shape[0])
    if budget is not None and ring.size:
        target = jax_impl.layout_target(columns, n, length) if delays is None else \
            jax_impl.plain_target(columns, delays, n, length)
        return _by_event_tiles(ring, events, data, indptr, t, target, nnz=columns.shape[0], shape=shape,
                               weighted=weighted, sink=sink, budget=budget)
    if delays is None:
        return jax_impl._deliver_layout(ring, events, data, columns, indptr, t, shape=shape, weighted=weighted,
                                        sink=sink)
    return jax_impl._deliver(ring, events, data, columns, indptr, delays, t, shape=shape, weighted=weighted,
                             sink=sink)


def _by_event_tiles(ring, events, data, indptr, t, target, *, nnz, shape, weighted, sink, budget):
    """The tile listing: the tiles of 1,024 stored synapses that the event rows span, in row order, ``budget``
    a pass (a row may end in the next pass), each entry kept within its row; ``target``: as
    :func:`~eventjax.kernels.delay.jax_impl.layout_target` (``window(a)``: the pass's tiles of ``a``)."""
    m, n = shape
    length = ring.shape[0]
    acc = jnp.float32
    active, value = reference.event_values(events, acc, weighted)
    start, end = indptr[:-1], jnp.maximum(indptr[1:], indptr[:-1])
    first = start // TILE
    count = jnp.where(active & (end > start), (end - 1) // TILE - first + 1, 0)
    upto = running_count(count, nnz // TILE + 2 * m)  # a row of e entries spans at most e / TILE + 2 tiles
    total = upto[-1]
    shift = first - (upto - count)  # the g-th tile listed, of row r, is tile g + shift[r]
    now = jnp.mod(t.reshape(()).astype(jnp.int32), length)
    within = jnp.arange(TILE, dtype=jnp.int32).reshape(1, 8, TILE // 8)
    rank = jnp.arange(budget, dtype=jnp.int32)

    def one_pass(p, block):
        g = p * budget + rank
        row = jnp.minimum(search_sorted(upto, g + 1), m - 1)  # the row whose tiles hold the g-th
        live = g < total
        # clipped: row pointers past the entries (unrepaired structure) never read past the arrays
        tile = jnp.clip(jnp.where(live, g + shift[row], 0), 0, nnz // TILE - 1)
        pos = tile[:, None, None] * TILE + within
        ok = live[:, None, None] & (pos >= start[row][:, None, None]) & (pos < end[row][:, None, None])

        def window(a):
            return a.reshape(-1, 8, TILE // 8).at[tile].get(mode='promise_in_bounds')

        # binary events read no value (a single-value gather costs a TPU ~13 ns an index)
        return jax_impl.add_pass(sink, block, target, window, ok, now, data,
                                 value[row][:, None, None] if weighted else None, size=length * n, acc=acc)

    block = lax.fori_loop(0, (total + budget - 1) // budget, one_pass, sink.start(ring.astype(acc).reshape(-1)))
    return sink.finish(block).reshape(length, n).astype(ring.dtype)
