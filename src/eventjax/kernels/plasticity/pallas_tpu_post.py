"""TPU (Mosaic) kernel of ``dense_on_post``: the 128-wide column tiles that hold the events, updated in place.

A column of a row-major ``(m, n)`` matrix is strided (one lane per
128-lane row), so the kernel works on column tiles ``(rows, 128)`` at
``128 * tile``: the tiles that hold at least one event are listed (in JAX,
O(n)), and a grid of (row blocks, listed tiles) fetches each block of a
listed tile, adds the trace on the event lanes (a lane mask; the trace, a
column, broadcast along lanes) and bounds it. The weights are aliased to
the result and the grid's second dimension is the number of listed tiles,
so blocks of tiles without an event are neither read nor written (with no
event at all, tile 0 is read and written back unchanged): a few events
cost a few tiles, and events in every tile cost one pass over the
matrix. Two events in one tile update it once. Edge blocks are masked by
Pallas (no padding copy). Additions are elementwise, so NaN and inf
traces need no fallback; weights other than float32 take the ``jax``
kernel (Mosaic has no float16 vector loads).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from eventjax.kernels.common.events import event_indicator
from eventjax.kernels.common.pallas.tpu_pieces import in_32_bits
from eventjax.kernels.common.pallas.tpu_rows import tpu_interpret
from eventjax.kernels.plasticity import jax_impl
from eventjax.kernels.plasticity.pallas_tpu import _bounded

__all__ = ['dense_on_post_tpu_kernel', 'event_tiles']

_LANES = 128
# Rows of a block: (2,048, 128) float32 is 1 MiB; weights in and out and the trace column, double-buffered,
# take 6 MiB of VMEM.
_BLOCK_ROWS = 2048


def event_tiles(post_spike):
    """``(count, tiles)``: how many 128-wide column tiles hold an event, and their ids first (int32).

    Example:
        >>> count, tiles = event_tiles(jnp.zeros(300, bool).at[5].set(True).at[260].set(True))
        >>> int(count), tiles.tolist()
        (2, [0, 2, 0])
    """
    n = post_spike.shape[0]
    n_tiles = pl.cdiv(n, _LANES)
    hit = jnp.pad(event_indicator(post_spike, jnp.int32), (0, n_tiles * _LANES - n)).reshape(n_tiles, _LANES)
    touched = jnp.any(hit > 0, axis=1)
    tiles = jnp.nonzero(touched, size=n_tiles, fill_value=0)[0].astype(jnp.int32)
    return jnp.sum(touched, dtype=jnp.int32), tiles


def _body(w_min, w_max):
    def body(count_ref, tiles_ref, w_ref, events_ref, trace_ref, out_ref):
        del count_ref, tiles_ref  # they drive the block indices
        w = w_ref[...]
        new = _bounded(w + trace_ref[...], w_min, w_max)
        out_ref[...] = jnp.where(events_ref[...] > 0, new, w)
    return body


def _update(weight, pre_trace, post_spike, *, w_min, w_max, interpret):
    m, n = weight.shape
    rows = min(_BLOCK_ROWS, pl.cdiv(m, 8) * 8)
    if interpret and (m % rows or n % _LANES):
        # The TPU interpreter pads an input to whole blocks and returns its aliased output padded, at odd
        # sizes; padding first gives it whole blocks (on the chip Pallas masks the edge blocks instead).
        pad_m, pad_n = pl.cdiv(m, rows) * rows - m, pl.cdiv(n, _LANES) * _LANES - n
        padded = _update(jnp.pad(weight, ((0, pad_m), (0, pad_n))), jnp.pad(pre_trace, (0, pad_m)),
                         jnp.pad(post_spike, (0, pad_n)), w_min=w_min, w_max=w_max, interpret=interpret)
        return padded[:m, :n]
    count, tiles = event_tiles(post_spike)
    tile = pl.BlockSpec((rows, _LANES), lambda r, s, count_ref, tiles_ref: (r, tiles_ref[s]))
    return pl.pallas_call(
        in_32_bits(_body(w_min, w_max)),
        out_shape=jax.ShapeDtypeStruct(weight.shape, weight.dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            # With no event, tile 0 (tiles' filler) is read and written back unchanged: the grid is never empty.
            num_scalar_prefetch=2, grid=(pl.cdiv(m, rows), jnp.maximum(count, 1)),
            in_specs=[tile,
                      pl.BlockSpec((1, _LANES), lambda r, s, count_ref, tiles_ref: (0, tiles_ref[s])),
                      pl.BlockSpec((rows, 1), lambda r, s, *_: (r, 0))],
            out_specs=tile),
        input_output_aliases={2: 0},  # operand 2 (count, tiles, then the weights): the result
        interpret=tpu_interpret(interpret),
    )(count.reshape(1), tiles, weight, event_indicator(post_spike, jnp.float32).reshape(1, n),
      pre_trace.astype(jnp.float32).reshape(m, 1))


def dense_on_post_tpu_kernel(*, outs, w_min=None, w_max=None, **static):
    """``call(weight, pre_trace, post_spike, *, interpret)``: on column events, ``weight[:, j] += pre_trace``."""
    jax_kernel = jax_impl.dense_on_post_kernel(outs=outs, w_min=w_min, w_max=w_max)

    def call(weight, pre_trace, post_spike, *, interpret):
        m, n = weight.shape
        if m == 0 or n == 0 or weight.dtype != jnp.float32:
            return jax_kernel(weight, pre_trace, post_spike)[0]
        return _update(weight, pre_trace, post_spike, w_min=w_min, w_max=w_max, interpret=interpret)
    return call
