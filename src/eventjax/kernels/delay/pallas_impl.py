"""Pallas kernel (gpu, Triton lowering) for delayed delivery.

One program per block of presynaptic rows; a row without an event adds
nothing, otherwise each kept synapse is added with ``atomic_add`` into the
ring, which is passed in flattened to ``(L * n, 1)`` and aliased as the
output (so the ring itself is the starting value). Dropped as on every
backend: columns outside ``[0, n)``, delays outside ``[1, L)``; row ranges
come from the repaired ``indptr``. The layout form reads one packed offset
``delay * n + column`` per synapse instead (kept in ``[n, L * n)``), which
with the flattened ring is the position itself, shifted by ``t``. Mosaic
has no atomics: the TPU kernels (one-hot products) are in ``pallas_tpu``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl

from eventjax.kernels.common.events import accumulation_dtype
from eventjax.kernels.common.pallas.rows import add_into_row, triton_params
from eventjax.kernels.delay.pallas_tpu import csr_delay_deliver_layout_tpu_kernel, csr_delay_deliver_tpu_kernel

__all__ = ['TPU_DEFAULT', 'csr_delay_deliver_kernel', 'csr_delay_deliver_layout_kernel',
           'csr_delay_deliver_layout_tpu_kernel', 'csr_delay_deliver_tpu_kernel']

# Not the default on a TPU until measured faster than the jax kernel there.
TPU_DEFAULT = False

_ROWS_PER_PROGRAM = 8


def _body(m, length, homogeneous_w, acc, target):
    """The kernel body; ``target(structure_refs, k, now)`` is entry ``k``'s ``(flat ring position, kept)``."""

    def body(data_ref, *refs):
        *structure, indptr_ref, t_ref, v_ref, _ring_ref, y_ref = refs
        base = pl.program_id(0) * _ROWS_PER_PROGRAM
        t = t_ref[0]
        period = jnp.asarray(length, t.dtype)  # the step's own dtype: a Python int is int64 under x64
        now = lax.rem(lax.rem(t, period) + period, period)
        nnz = structure[0].shape[0]

        def row(r, carry):
            i = base + r
            vi = v_ref[jnp.minimum(i, m - 1), :]

            @pl.when((i < m) & (jnp.max(jnp.abs(vi)) != 0))
            def _():
                start = jnp.clip(indptr_ref[i], 0, nnz)
                end = jnp.clip(indptr_ref[i + 1], 0, nnz)

                def entry(k, carry):
                    w = data_ref[0 if homogeneous_w else k].astype(acc)
                    pos, keep = target(structure, k, now)

                    @pl.when(keep)
                    def _():
                        add_into_row(y_ref, pos, w * vi)
                    return carry

                lax.fori_loop(start, end, entry, 0)
            return carry

        lax.fori_loop(0, _ROWS_PER_PROGRAM, row, 0)
    return body


def _columns_and_delays(n, length, homogeneous_d):
    def target(structure, k, now):
        indices_ref, delays_ref = structure
        j = indices_ref[k]
        d = delays_ref[0 if homogeneous_d else k]
        slot = now + d
        slot = jnp.where(slot >= length, slot - length, slot)
        column = (j >= 0) & (j < n)
        j = jnp.where(column, j, 0).astype(slot.dtype)  # int64 columns (x64) narrowed once known to fit
        return slot * n + j, column & (d >= 1) & (d < length)
    return target


def _packed(n, length):
    def target(structure, k, now):
        (offsets_ref,) = structure
        o = offsets_ref[k]
        q = o - (length - now) * n  # now * n + o - L * n stays within int32
        return jnp.where(q < 0, q + length * n, q), (o >= n) & (o < length * n)
    return target


def _kernel(shape, weighted, outs, target_of):
    m, n = shape
    out = outs[0]
    acc = accumulation_dtype(out.dtype)

    def call(ring, events, data, *structure, interpret):
        length = ring.shape[0]
        if m == 0 or n == 0 or length == 0 or structure[0].shape[0] == 0:
            return ring
        if weighted and events.dtype != jnp.bool_:
            # NaN stays NaN (an event: NaN != 0); zeros are skipped.
            v = events.astype(acc)
        else:
            v = (events if events.dtype == jnp.bool_ else events > 0).astype(acc)
        *structure, indptr, t = structure
        body = _body(m, length, data.shape[0] == 1, acc, target_of(n, length))
        aliased = 1 + len(structure) + 3  # data, the structure, indptr, t, v: then the ring
        y = pl.pallas_call(
            body, out_shape=jax.ShapeDtypeStruct((length * n, 1), acc), grid=(pl.cdiv(m, _ROWS_PER_PROGRAM),),
            input_output_aliases={aliased: 0}, interpret=interpret, compiler_params=triton_params(),
        )(data, *structure, indptr, t, v[:, None], ring.astype(acc).reshape(length * n, 1))
        return y.reshape(length, n).astype(out.dtype)

    return call


def csr_delay_deliver_kernel(*, shape, weighted, outs):
    """``call(ring, events, data, indices, indptr, delays, t, *, interpret)`` for the pallas bridge."""
    def call(ring, events, data, indices, indptr, delays, t, *, interpret):
        target_of = lambda n, length: _columns_and_delays(n, length, delays.shape[0] == 1)
        return _kernel(shape, weighted, outs, target_of)(ring, events, data, indices, delays, indptr, t,
                                                         interpret=interpret)
    return call


def csr_delay_deliver_layout_kernel(*, shape, weighted, outs):
    """``call(ring, events, data, offsets, indptr, t, *, interpret)`` for the pallas bridge."""
    return _kernel(shape, weighted, outs, _packed)
