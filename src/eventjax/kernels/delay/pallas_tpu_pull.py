"""TPU (Mosaic) delivery at read time: each update sums the synapses arriving now into one input vector.

A ring of delay slots takes each spike's synapses when the spike happens:
on a TPU, with no scatter instruction, that is a sort of the update's
synapses by target and a chain of read-modify-writes of the ring
(:mod:`~eventjax.kernels.delay.pallas_tpu_sorted`). Here nothing is added
ahead. The state keeps the spiking rows of the last ``L`` steps (an
``(L, K)`` table of row ids, :func:`record`), and each update sums the
synapses that arrive now, those of a row that spiked ``d`` steps ago with
delay ``d``, into one vector (:func:`pull_input`); no ring, no sort.

- The input's columns (padded to whole rows of 128) are cut into ``G``
  groups of ``R`` rows of 128. Each row's synapses are stored sorted by
  packed offset ``delay * columns + column`` (the delivery layout's order),
  hence by (delay, group): the synapses of a (row, delay, group) are one
  contiguous run, found through a table built once on the host
  (:func:`build_bounds`, 16 lanes a row and delay).
- An update lists the arriving (row, delay) pairs (a row gather of their
  bounds), and the rows of 128 stored synapses that each pair's run per
  group touches (prefix sums over the pairs' counts); XLA reads those rows
  whole (a row gather: XLA's TPU gather of unaligned windows of a flat
  array is a loop of one dynamic slice a window), the synapses outside the
  run masked, so a group's entries lie packed at the front of its slots.
- A kernel per group adds its entries by one product per tile of entries:
  ``A (3R x T) @ B (T x 128)``, ``A`` holding each entry's weight in three
  bfloat16 parts (their sum is the float32 weight) at its row, ``B`` its
  lane's one-hot (exact in bfloat16); the MXU accumulates the tiles in
  float32, with no read-modify-write chain, and only the tiles that hold
  entries are visited.
- An update whose arriving weights hold NaN or inf is added by XLA's
  scatter instead (in a product a non-finite weight would reach every lane
  of its row): only the arriving weights are checked.

The sums run in another order than a ring's adds: equal within float32
rounding, not bit for bit.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from eventjax.kernels.common.pallas.tpu_pieces import in_32_bits
from eventjax.kernels.common.pallas.tpu_rows import bf16_parts, dot_t, tpu_interpret

__all__ = ['CAPACITY', 'GROUPS', 'TILE', 'as_rows', 'build_bounds', 'group_rows', 'groups_for', 'init_spikes',
           'pull_input', 'record']

_LANES = 128
GROUPS = 8  # column groups: a product's rows are R = columns / 128 / G (rounded up to 16)
CAPACITY = 1024  # rows of 128 synapses a group reads a round
TILE = 512  # entries a product takes


def groups_for(columns: int) -> int:
    """Column groups for ``columns`` targets: about 76 rows of 128 a group (PD14's 77,184 in 8), at most
    ``GROUPS``.

    Example:
        >>> groups_for(77_184), groups_for(1_000)
        (8, 1)
    """
    return int(min(GROUPS, max(1, round(-(-columns // _LANES) / 76))))


def group_rows(columns: int, groups: int) -> int:
    """Rows of 128 columns in each of ``groups`` groups: ``columns`` padded to 128, split, rounded up to 16.

    Example:
        >>> group_rows(77_184, 8), group_rows(300, 2)
        (80, 16)
    """
    rows = -(-max(columns, 1) // _LANES)
    per_group = (rows + groups - 1) // groups
    return -(-per_group // 16) * 16


def build_bounds(offsets, indptr, *, columns: int, length: int, groups: int = GROUPS, block: int = 1 << 24):
    """Where each (row, delay, group)'s synapses begin, int32 rows of 128: the 16 lanes from
    ``(r * L + d) * 16`` on hold the ``G`` groups' first synapses, then the end of the last (``G`` at most
    15), so an update reads each arriving (row, delay) as one row of 128 (a row gather); built on the host
    once, ``block`` synapses at a time.

    ``offsets``: each synapse's packed offset ``delay * columns + column``, each row's sorted by it (or by
    delay, then column group); every delay in ``[1, length)``. Raises ValueError otherwise.

    Example:
        >>> # 4,096 columns in groups of 2,048; row 0: columns 1 and 2,049 at delay 1; row 1: column 0 at delay 2
        >>> b = build_bounds(np.array([4097, 6145, 8192]), np.array([0, 2, 3]), columns=4096, length=3, groups=2)
        >>> b.shape, b.reshape(-1, 16)[:6, :3].tolist()  # (row, delay) = (0, 0) ... (1, 2)
        ((2, 128), [[0, 0, 0], [0, 1, 2], [2, 2, 2], [2, 2, 2], [2, 2, 2], [2, 3, 3]])
    """
    offsets, indptr = np.asarray(offsets), np.asarray(indptr, np.int64)
    m, nnz = indptr.shape[0] - 1, int(indptr[-1])
    per_group = group_rows(columns, groups) * _LANES
    keys = m * length * groups
    if not 1 <= groups <= 15:
        raise ValueError(f'build_bounds(): groups must lie in [1, 15] (16 lanes a row and delay), got {groups}.')
    if (m + 1) * length * 16 >= 2 ** 31 or nnz >= 2 ** 31 or length * columns >= 2 ** 31:
        raise ValueError(f'build_bounds(): {m} rows x {length} delays x 16 and {nnz} synapses must stay below '
                         '2**31; use the sorted-target delivery.')
    counts = np.zeros(keys, np.int64)
    last = 0  # the previous block's last key: the order must hold across blocks too
    for lo in range(0, nnz, block):
        hi = min(nnz, lo + block)
        row_of = np.searchsorted(indptr, np.arange(lo, hi), side='right') - 1
        o = offsets[lo:hi].astype(np.int64)
        d, c = o // columns, o % columns
        if o.size and (d.min() < 1 or d.max() >= length):
            raise ValueError(f'build_bounds(): every delay must lie in [1, {length}) steps (packed offsets in '
                             f'[{columns}, {length * columns})); build the network with delays of at least one step.')
        key = (row_of * length + d) * groups + c // per_group
        if key.size and (key[0] < last or np.any(np.diff(key) < 0)):
            raise ValueError("build_bounds(): each row's synapses must be sorted by packed offset (delay, then "
                             'column); sort each row by it first (CSRDelayLayout.build sorts by delay alone).')
        if key.size:  # sorted: the block's keys are one range
            counts[key[0]:key[-1] + 1] += np.bincount(key - key[0])
            last = key[-1]
    flat = np.zeros(keys + 1, np.int64)
    np.cumsum(counts, out=flat[1:])
    # each (row, delay) its own 16 lanes: G starts, then the end; one more row (the spike table's "none")
    # and its padding begin and end at the last synapse: nothing arrives from them
    pairs = -(-(m + 1) * length // 8) * 8
    table = np.full((pairs, 16), nnz, np.int32)
    table[:m * length, :groups] = flat[:-1].reshape(m * length, groups)
    table[:m * length, groups:] = flat[groups::groups, None]
    return table.reshape(-1, _LANES)


def init_spikes(length: int, max_spikes: int, rows: int):
    """``(table, dropped)``: no spike held in ``length`` slots of ``max_spikes`` row ids (``rows``: none), and
    the count of spikes a full slot could not hold (int32, zero).

    Example:
        >>> table, dropped = init_spikes(3, 2, 5)
        >>> table.tolist(), int(dropped)
        ([[5, 5], [5, 5], [5, 5]], 0)
    """
    return jnp.full((length, max_spikes), rows, jnp.int32), jnp.zeros((), jnp.int32)


def record(table, dropped, spikes, t):
    """Hold the rows of ``spikes`` (bool, one per row) at step ``t``: the first ``K`` in slot ``t % L``; the rest
    are counted in ``dropped`` (a caller raises on it: they would never be delivered).

    Example:
        >>> table, dropped = record(*init_spikes(3, 2, 5), jnp.array([0, 1, 0, 1, 1], bool), 4)
        >>> table.tolist(), int(dropped)
        ([[5, 5], [1, 3], [5, 5]], 1)
    """
    length, k = table.shape
    m = spikes.shape[0]
    s = spikes.astype(jnp.int32)
    pos = jnp.cumsum(s) - 1
    # the i-th spiking row as a masked sum over the rows: no scatter
    hit = (spikes[None, :] & (pos[None, :] == jnp.arange(k, dtype=jnp.int32)[:, None]))
    count = pos[-1] + 1 if m else jnp.int32(0)
    ids = jnp.sum(jnp.where(hit, jnp.arange(m, dtype=jnp.int32)[None, :], 0), axis=1)
    ids = jnp.where(jnp.arange(k) < count, ids, m).astype(jnp.int32)
    table = lax.dynamic_update_slice(table, ids[None, :], (jnp.mod(t, length).astype(jnp.int32), 0))
    return table, dropped + jnp.maximum(count - k, 0).astype(jnp.int32)


def _body(*, rows, tile):
    """Refs: tiles per group (SMEM); the group's entry positions and weights ``(1, slots)``; its input block
    ``(rows, 128)`` in and out (aliased)."""
    def body(tiles_ref, pos_ref, w_ref, inp_ref, out_ref):
        g = pl.program_id(0)
        row_iota = lax.broadcasted_iota(jnp.int32, (rows, 1), 0)
        lane_iota = lax.broadcasted_iota(jnp.int32, (_LANES, 1), 0)

        def one_tile(i, acc):
            at = pl.multiple_of(i * tile, tile)
            pos = pos_ref[:, pl.ds(at, tile)]
            w = w_ref[:, pl.ds(at, tile)]
            hit = row_iota == lax.shift_right_arithmetic(pos, 7)  # -1: no entry, no row
            a = jnp.concatenate([jnp.where(hit, q, 0.0).astype(jnp.bfloat16) for q in bf16_parts(w)], axis=0)
            b = (lane_iota == lax.bitwise_and(pos, _LANES - 1)).astype(jnp.bfloat16)
            return acc + dot_t(a, b, False)

        acc = lax.fori_loop(0, tiles_ref[g], one_tile, jnp.zeros((3 * rows, _LANES), jnp.float32))
        out_ref[...] = inp_ref[...] + acc[:rows] + acc[rows:2 * rows] + acc[2 * rows:]

    return body


def _add_groups(inp, pos, w, used, *, tile, interpret):
    """``inp`` (G, R, 128) plus each group's entries (``pos``: position in the group, -1 none; ``w``: weight;
    ``(G, 1, slots)``; ``used``: entries per group, packed at the front)."""
    groups, rows, _ = inp.shape
    slots = pos.shape[2]
    tiles = ((used + tile - 1) // tile).astype(jnp.int32)
    entry = pl.BlockSpec((None, 1, slots), lambda g, *_: (g, 0, 0))
    block = pl.BlockSpec((None, rows, _LANES), lambda g, *_: (g, 0, 0))
    return pl.pallas_call(
        in_32_bits(_body(rows=rows, tile=tile)), out_shape=jax.ShapeDtypeStruct(inp.shape, jnp.float32),
        grid_spec=pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1, grid=(groups,),
                                               in_specs=[entry, entry, block], out_specs=block),
        input_output_aliases={3: 0},
        compiler_params=pltpu.CompilerParams(dimension_semantics=('parallel',)),
        interpret=tpu_interpret(interpret),
    )(tiles, pos, w, inp)


def as_rows(a):
    """A flat array of synapses as rows of 128 (padded with zeros), the form :func:`pull_input` reads: build it
    once, outside the update (inside a jitted update the reshape may copy every synapse).

    Example:
        >>> as_rows(jnp.arange(130)).shape
        (2, 128)
    """
    pad = -a.shape[0] % _LANES
    return (jnp.pad(a, (0, pad)) if pad else a).reshape(-1, _LANES)


def pull_input(data, offsets, bounds, table, t, *, columns, groups=GROUPS, capacity=CAPACITY, tile=None,
               interpret=False):
    """The input of step ``t``: the sum of the synapses of each row held in ``table`` (:func:`record`) at a
    step ``t - d`` with delay ``d``, float32 ``(G * R * 128,)`` (its first ``columns`` entries the targets').

    ``data``, ``offsets``: float32 weights and int32 packed offsets ``delay * columns + column`` as rows of 128
    (:func:`as_rows`), each row's synapses sorted by offset (more entries past the last row allowed);
    ``bounds``: :func:`build_bounds` of them with ``groups``. ``capacity``: rows of 128 synapses a group
    reads a round (more arriving: more rounds, never a dropped synapse); ``tile``: synapses a product takes
    (default: ``TILE``, or fewer if ``capacity * 128`` is); ``interpret``: Pallas's TPU interpreter (on a CPU).

    Example:
        >>> data, offsets = jnp.array([1., 2., 4.]), jnp.array([4097, 6145, 8192], jnp.int32)
        >>> bounds = jnp.asarray(build_bounds(offsets, [0, 2, 3], columns=4096, length=3, groups=2))
        >>> table, dropped = record(*init_spikes(3, 4, 2), jnp.array([True, True]), 0)
        >>> inp = pull_input(as_rows(data), as_rows(offsets), bounds, table, 1, columns=4096, groups=2,
        ...                  interpret=True)
        >>> float(inp[1]), float(inp[2049]), float(inp.sum())  # row 0's delay-1 synapses
        (1.0, 2.0, 3.0)
    """
    slots = capacity * _LANES
    tile = min(TILE, slots) if tile is None else tile
    if tile % _LANES or slots % tile:
        raise ValueError(f'pull_input(): tile must be a multiple of 128 dividing capacity * 128 ({slots}), '
                         f'got {tile}.')
    if data.ndim != 2 or data.shape[1] != _LANES or offsets.shape != data.shape:
        raise ValueError(f'pull_input(): data and offsets must be rows of 128 synapses of one shape (as_rows), got '
                         f'{data.shape} and {offsets.shape}.')
    length, k = table.shape
    rows = group_rows(columns, groups)
    per_group = rows * _LANES
    m = bounds.shape[0] * 8 // length - 1  # the table's "none": its bounds hold no synapse
    t = jnp.asarray(t, jnp.int32).reshape(())
    d = jnp.mod(t - jnp.arange(length, dtype=jnp.int32), length)[:, None]
    held = (table < m) & (d != 0)
    pair = jnp.where(held, jnp.minimum(table, m) * length + d, m * length).reshape(-1)
    # each pair's 16 lanes of its row of bounds: a row gather, then a select among 8 pieces
    b = bounds[pair // 8].reshape(-1, 8, 16)
    b = jnp.take_along_axis(b, (pair % 8)[:, None, None], axis=1)[:, 0]
    # (G, pairs): the prefix sums run along the lanes
    starts = b[:, :groups].T
    stops = b[:, 1:groups + 1].T
    first = starts // _LANES
    chunks = jnp.where(stops > starts, (stops - 1) // _LANES - first + 1, 0)
    ends = jnp.cumsum(chunks, axis=1)  # the rows of synapses of the pairs up to each
    totals = ends[:, -1]
    rounds = jnp.max((totals + capacity - 1) // capacity)
    g_base = jnp.arange(groups, dtype=jnp.int32)[:, None, None] * per_group
    lane = jnp.arange(_LANES, dtype=jnp.int32)

    def one_round(r, inp):
        j = r * capacity + jnp.arange(capacity, dtype=jnp.int32)
        p = jax.vmap(lambda e: jnp.searchsorted(e, j, side='right'))(ends)  # (G, capacity): each slot's pair
        p = jnp.minimum(p, ends.shape[1] - 1).astype(jnp.int32)
        at = lambda a: jnp.take_along_axis(a, p, axis=1)  # noqa: E731
        live = j[None, :] < totals[:, None]
        row = jnp.where(live, at(first) + j[None, :] - (at(ends) - at(chunks)), 0)
        e = row[..., None] * _LANES + lane
        ok = live[..., None] & (e >= at(starts)[..., None]) & (e < at(stops)[..., None])
        # whole rows of 128 synapses (a row gather), those outside the run masked
        w = jnp.where(ok, data[row], 0.0).astype(jnp.float32)
        pos = jnp.where(ok, jnp.mod(offsets[row], columns) - g_base, -1)
        used = jnp.clip(totals - r * capacity, 0, capacity) * _LANES
        pos, w = pos.reshape(groups, 1, -1), w.reshape(groups, 1, -1)

        def kernel():
            return _add_groups(inp, pos, w, used, tile=tile, interpret=interpret)

        def scatter():  # NaN or inf arrives: each weight reaches its own target only
            flat = jnp.where(pos >= 0, pos + g_base, inp.size).reshape(-1)
            return inp.reshape(-1).at[flat].add(w.reshape(-1), mode='drop').reshape(inp.shape)

        return lax.cond(jnp.all(jnp.isfinite(w)), kernel, scatter)

    inp = jnp.zeros((groups, rows, _LANES), jnp.float32)
    return lax.fori_loop(0, rounds, one_round, inp).reshape(-1)
