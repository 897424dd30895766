"""TPU (Mosaic) kernels of the presynaptic plasticity updates with whole rows: ``dense_on_pre``, ``fcn_on_pre``.

Both update the rows of the events of an ``(m, k)`` weight matrix (``k = n``
for dense weights), in place: the weights stay in HBM, aliased to the
result. The event rows are compacted on the chip; each one is fetched by a
DMA driven by its row id (with its row of targets, for FCN), updated in
vector registers and written back by DMA, eight rows a batch, the next
batch's fetches overlapping this batch's work. Rows are distinct, so no two
transfers touch the same weight.

The trace is added as it is (dense) or gathered at the row's targets
(FCN) as a one-hot product on the MXU: the trace stays in VMEM as a ``(128,
n / 128)`` matrix, ``trace.T @ onehot_hi`` gives each target's 128-wide
slice and a sublane select picks ``trace[t]`` (exact at full float32
precision). The MXU multiplies whole tiles, so a NaN or inf in the trace
would reach the other targets: such a trace takes the ``jax`` kernel, as do
weights that are not float32 (Mosaic has no float16 vector loads) and
problems too large for SMEM or VMEM.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax import lax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from eventjax.kernels.common.pallas.tpu_pieces import SMEM_WORDS, in_32_bits, in_batches, store_and_wait
from eventjax.kernels.common.pallas.tpu_rows import dot, packed_flags, tpu_interpret, with_finite_fallback
from eventjax.kernels.plasticity import jax_impl

__all__ = ['dense_on_pre_tpu_kernel', 'fcn_on_pre_tpu_kernel', 'fits_the_chip']

_LANES = 128
_ROWS_PER_BATCH = 8
# A row of weights (and of targets) per buffer entry, 2 x 8 of each in VMEM; the gathered trace's one-hot
# matrix is (n / 128) x k.
_MAX_ROW = 65_536
_MAX_TRACE = 200_000


def fits_the_chip(*, m: int, n: int, k: int, gather: bool, pieces: int = 0) -> bool:
    """Whether an update's kernel fits the chip's on-core memories (else: the jax kernel).

    ``m`` rows of ``k`` entries (``k = 128`` per piece for CSR, with a work
    list of ``pieces``); ``gather``: the trace (length ``n``) is gathered.

    Example:
        >>> fits_the_chip(m=4000, n=4000, k=100, gather=True)
        True
        >>> fits_the_chip(m=4000, n=10**6, k=10**6, gather=False)
        False
    """
    fits = m + m // 32 + 2 + 2 * pieces <= SMEM_WORDS and k <= _MAX_ROW
    return fits and (not gather or (n <= _MAX_TRACE and -(-n // _LANES) * k <= 4 * _MAX_ROW))


def _bounded(v, w_min, w_max):
    if w_min is not None:
        v = jnp.where(v < w_min, jnp.float32(w_min), v)
    if w_max is not None:
        v = jnp.where(v > w_max, jnp.float32(w_max), v)
    return v


def _gathered(trace_t, t, hi_iota, lo_iota):
    """``trace[t]`` for a ``(1, k)`` vector of targets in range, ``trace_t`` the trace as ``(128, n / 128)``."""
    hi, lo = lax.shift_right_arithmetic(t, 7), lax.bitwise_and(t, _LANES - 1)
    rows = dot(trace_t, (hi_iota == hi).astype(jnp.float32), True)  # (128, k): each target's slice
    return jnp.sum(jnp.where(lo_iota == lo, rows, 0.0), axis=0, keepdims=True)


def _trace_columns(post_trace, n):
    """The trace as a ``(128, n / 128)`` matrix (column ``hi``: ``trace[128 * hi:128 * (hi + 1)]``), its spec."""
    hi_rows = max(1, pl.cdiv(n, _LANES))
    trace = jnp.pad(post_trace, (0, hi_rows * _LANES - n)).reshape(hi_rows, _LANES).T
    return trace, pl.BlockSpec((_LANES, hi_rows), lambda i, *_: (0, 0))


def _body(*, m, n, k, gather, w_min, w_max):
    """Kernel body; refs: flags (SMEM), trace (VMEM), weights [, targets] (HBM), out (HBM, the weights), scratch."""
    group = _ROWS_PER_BATCH

    def body(flags_ref, trace_ref, *refs):
        refs = list(refs)
        w_hbm = refs.pop(0)
        idx_hbm = refs.pop(0) if gather else None
        out_hbm, ids_ref, w_buf = refs[:3]
        idx_buf = refs[3] if gather else None
        sem_in, sem_out = refs[-2:]
        del w_hbm  # aliased: the output is the weights, read and written through out_hbm

        def collect(i, count):
            ids_ref[count] = i
            word = flags_ref[lax.shift_right_logical(i, 5)]
            return count + lax.bitwise_and(lax.shift_right_logical(word, lax.bitwise_and(i, 31)), 1)

        count = lax.fori_loop(0, m, collect, jnp.int32(0))

        def row_of(r, g):
            return ids_ref[jnp.minimum(r * group + g, count - 1)]

        def fetches(r, slot):
            out = []
            for g in range(group):
                row = row_of(r, g)
                out.append(pltpu.make_async_copy(out_hbm.at[pl.ds(row, 1)], w_buf.at[slot, pl.ds(g, 1)],
                                                 sem_in.at[0, slot]))
                if gather:
                    out.append(pltpu.make_async_copy(idx_hbm.at[pl.ds(row, 1)], idx_buf.at[slot, pl.ds(g, 1)],
                                                     sem_in.at[1, slot]))
            return out

        def stores(r, slot):
            # A batch's last rows may repeat its last event row: each is written once, from its own update.
            return [pltpu.make_async_copy(w_buf.at[slot, pl.ds(g, 1)], out_hbm.at[pl.ds(row_of(r, g), 1)],
                                          sem_out.at[slot]) for g in range(group)]

        if gather:
            hi_rows = trace_ref.shape[1]
            hi_iota = lax.broadcasted_iota(jnp.int32, (hi_rows, k), 0)
            lo_iota = lax.broadcasted_iota(jnp.int32, (_LANES, k), 0)
            trace_t = trace_ref[...]

        def one_batch(r, slot):
            for g in range(group):
                w = w_buf[slot, pl.ds(g, 1), :]
                if gather:
                    t = idx_buf[slot, pl.ds(g, 1), :]
                    keep = (t >= 0) & (t < n)
                    inc = _gathered(trace_t, t, hi_iota, lo_iota)
                    w_buf[slot, pl.ds(g, 1), :] = jnp.where(keep, _bounded(w + inc, w_min, w_max), w)
                else:
                    w_buf[slot, pl.ds(g, 1), :] = _bounded(w + trace_ref[...], w_min, w_max)
            # Stored before the slot is fetched into again, two batches on. The rows past the events repeat
            # the last one: only its first copy is stored.
            store_and_wait([(r * group + g < count, c) for g, c in enumerate(stores(r, slot))])

        in_batches(lax.div(count + (group - 1), jnp.int32(group)), fetches, one_batch)

    return body


def _update(weight, pre_spike, post_trace, indices, *, n, w_min, w_max, interpret):
    """The rows of ``pre_spike``'s events of ``weight`` (``(m, k)`` float32) updated; ``indices``: FCN targets."""
    m, k = weight.shape
    gather = indices is not None
    if gather:
        trace, trace_spec = _trace_columns(post_trace, n)
    else:
        trace = post_trace.reshape(1, k)
        trace_spec = pl.BlockSpec((1, k), lambda i, *_: (0, 0))
    hbm = [weight] + ([indices.astype(jnp.int32)] if gather else [])
    scratch = [pltpu.SMEM((m,), jnp.int32), pltpu.VMEM((2, _ROWS_PER_BATCH, k), jnp.float32)]
    if gather:
        scratch.append(pltpu.VMEM((2, _ROWS_PER_BATCH, k), jnp.int32))
    scratch += [pltpu.SemaphoreType.DMA((2, 2)), pltpu.SemaphoreType.DMA((2,))]
    return pl.pallas_call(
        in_32_bits(_body(m=m, n=n, k=k, gather=gather, w_min=w_min, w_max=w_max)),
        out_shape=jax.ShapeDtypeStruct(weight.shape, weight.dtype),
        grid_spec=pltpu.PrefetchScalarGridSpec(
            num_scalar_prefetch=1, grid=(1,),
            in_specs=[trace_spec] + [pl.BlockSpec(memory_space=pl.ANY)] * len(hbm),
            out_specs=pl.BlockSpec(memory_space=pl.ANY),
            scratch_shapes=scratch),
        input_output_aliases={2: 0},  # operand 2 (flags, trace, then the weights): the result
        interpret=tpu_interpret(interpret),
    )(packed_flags(pre_spike), trace, *hbm)


def _row_update(weight, pre_spike, post_trace, indices, *, n, w_min, w_max, interpret, fallback):
    m, k = weight.shape
    if m == 0 or k == 0 or n == 0:
        return fallback()
    if weight.dtype != jnp.float32 or not fits_the_chip(m=m, n=n, k=k, gather=indices is not None):
        return fallback()

    def kernel():
        return _update(weight, pre_spike, post_trace.astype(jnp.float32), indices, n=n, w_min=w_min, w_max=w_max,
                       interpret=interpret)

    if indices is None:  # the trace is added elementwise: a NaN stays where it is
        return kernel()
    return with_finite_fallback(kernel, fallback, post_trace)


def dense_on_pre_tpu_kernel(*, outs, w_min=None, w_max=None, **static):
    """``call(weight, pre_spike, post_trace, *, interpret)``: on row events, ``weight[i, :] += post_trace``."""
    jax_kernel = jax_impl.dense_on_pre_kernel(outs=outs, w_min=w_min, w_max=w_max)

    def call(weight, pre_spike, post_trace, *, interpret):
        return _row_update(weight, pre_spike, post_trace, None, n=weight.shape[1], w_min=w_min, w_max=w_max,
                           interpret=interpret, fallback=lambda: jax_kernel(weight, pre_spike, post_trace)[0])
    return call


def fcn_on_pre_tpu_kernel(*, outs, w_min=None, w_max=None, shape, **static):
    """``call(weight, indices, pre_spike, post_trace, *, interpret)``: ``weight[i, c] += post_trace[indices[i, c]]``."""
    jax_kernel = jax_impl.fcn_on_pre_kernel(outs=outs, w_min=w_min, w_max=w_max)

    def call(weight, indices, pre_spike, post_trace, *, interpret):
        return _row_update(weight, pre_spike, post_trace, indices, n=shape[1], w_min=w_min, w_max=w_max,
                           interpret=interpret,
                           fallback=lambda: jax_kernel(weight, indices, pre_spike, post_trace)[0])
    return call
