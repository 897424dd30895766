"""Pallas kernels for the dense family (``binary_densemv``, ``binary_densemm``).

Each generator ``kg(*, transpose, outs)`` returns ``call(weights, spikes, *,
interpret)``, the form :mod:`eventjax.backends.pallas` expects.

Both directions are gathers over tiles of the weight matrix, so neither
needs atomics: ``transpose=False`` gives each program a block of output
rows and loops over column tiles; ``transpose=True`` gives it a block of
output columns and loops over row tiles. A vector of events travels as one
column. Each tile *selects* the weights of the events (never multiplies by
a 0/1 mask), so a non-event contributes nothing even where its weight is
NaN; that is also why the tile is reduced with a sum, not a ``dot``.

Operands whose sizes are not multiples of the tile are padded with zeros
(non-events) before the kernel, which costs a copy of the weights; sizes
that are multiples of the tile pass through untouched.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

from eventjax.kernels.common.events import accumulation_dtype, event_indicator
from eventjax.kernels.common.pallas.rows import triton_params

__all__ = ['binary_densemm_kernel', 'binary_densemm_tpu_kernel', 'binary_densemv_kernel',
           'binary_densemv_tpu_kernel']

# Rows x columns of a weight tile, and the widest block of event columns
# one program handles (Triton needs powers of 2; the 3-D select-and-sum of a
# tile holds tile x event-columns values).
_TILE = (16, 16)
_MAX_COLS = 16
_TPU_TILE = (8, 128)


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


def binary_densemv_tpu_kernel(*, transpose, outs):
    """The same for tpu (Mosaic): tiles of (8, 128), the TPU's native vector tile."""
    return _dense_call(transpose=transpose, out=outs[0], tile=_TPU_TILE)


binary_densemm_kernel = binary_densemv_kernel
binary_densemm_tpu_kernel = binary_densemv_tpu_kernel
