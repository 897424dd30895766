"""Warp kernels (cpu and gpu) for delayed delivery.

One thread per presynaptic row: a row without an event returns at once,
otherwise each kept synapse is added with ``atomic_add`` into ``out[slot,
column]``. ``out`` is the ring itself: the operator aliases output 0 to
input 0, so the bridge passes the ring once, as the kernel's in/out ``out``
parameter (the kernel lists the other inputs, then ``out``), and under
donation or in a ``lax.scan`` carry nothing but the synapses of the events
is touched. Dropped as on every backend: rows with an invalid ``indptr`` range, columns
outside ``[0, n)``, delays outside ``[1, L)``. The layout form reads one
packed offset ``delay * n + column`` per synapse (kept when it lies in
``[n, L * n)``) and adds at its position in the ring's buffer seen flat.
"""

# No `from __future__ import annotations`: warp evaluates kernel annotations
# against the factory's local variables, which string annotations cannot see.

import functools

from eventjax.backends.warp import WarpKernelSpec, import_warp
from eventjax.kernels.common.warp.typing import accumulator_type, event_test, index_reader, kept_row, warp_types

__all__ = ['csr_delay_deliver_kernel', 'csr_delay_deliver_layout_kernel']


@functools.cache
def _event_value(et, at, weighted):
    """A ``wp.func``: the value an event delivers, 0 for no event (weighted: the entry itself, zeros skipped)."""
    wp = import_warp()
    is_event = event_test(et)
    if weighted and et is not wp.bool:
        @wp.func
        def value(x: et) -> at:
            return at(x)

        @wp.func
        def active(x: et) -> bool:
            return x != et(0)
    else:
        @wp.func
        def value(x: et) -> at:
            return at(1.0)

        @wp.func
        def active(x: et) -> bool:
            return is_event(x)
    return value, active


@functools.cache
def _ring_now():
    """A ``wp.func``: the ring row of step ``t[0]`` (floor modulo: a negative step counts back from the end)."""
    wp = import_warp()

    @wp.func
    def ring_now(t: wp.array(dtype=wp.int32), length: int) -> int:
        now = t[0] % length
        if now < 0:
            now += length
        return now
    return ring_now


@functools.cache
def _opening(rt, et, wt, weighted):
    """A ``wp.func``: ``(fires, value, L, n, wstep)`` of row ``i``, shared by the plain and layout kernels.

    ``fires`` is False for a row without an event (the kernel then returns:
    a ``return`` cannot move into a func); ``wstep`` is 0 for one shared
    weight, which every entry then reads at position 0.
    """
    wp = import_warp()
    at = accumulator_type(rt)
    value, active = _event_value(et, at, weighted)

    @wp.func
    def opening(events: wp.array(dtype=et), data: wp.array(dtype=wt), i: int, out: wp.array2d(dtype=at)):
        x = events[i]
        return active(x), value(x), out.shape[0], out.shape[1], wp.where(data.shape[0] == 1, 0, 1)
    return opening


@functools.cache
def _deliver(rt, et, wt, it, weighted):
    wp = import_warp()
    as_index = index_reader(it)
    at = accumulator_type(rt)
    opening, ring_now, kept = _opening(rt, et, wt, weighted), _ring_now(), kept_row(it)

    @wp.kernel(module='unique', enable_backward=False)
    def deliver(events: wp.array(dtype=et), data: wp.array(dtype=wt),
                indices: wp.array(dtype=it), indptr: wp.array(dtype=it), delays: wp.array(dtype=wp.int32),
                t: wp.array(dtype=wp.int32), out: wp.array2d(dtype=at)):
        i = wp.tid()
        fires, v, length, n, wstep = opening(events, data, i, out)
        if not fires:
            return
        dstep = wp.where(delays.shape[0] == 1, 0, 1)  # one shared delay: always entry 0
        now = ring_now(t, length)
        se = kept(indptr, i, indices.shape[0])
        for k in range(se[0], se[1]):
            j = as_index(indices[k])
            d = int(delays[k * dstep])
            if j >= 0 and j < n and d >= 1 and d < length:
                slot = now + d
                if slot >= length:
                    slot -= length
                wp.atomic_add(out, slot, j, at(data[k * wstep]) * v)

    return deliver


def csr_delay_deliver_kernel(dtypes, *, shape, weighted, outs):
    """The warp spec for ``csr_delay_deliver`` with inputs of ``dtypes``: ``out`` (the ring, in place) updated."""
    rt, et, wt, it, _, _, _ = warp_types(dtypes)
    return WarpKernelSpec(_deliver(rt, et, wt, it, weighted), dim=lambda *shapes: shapes[1], widen_outputs=True)


@functools.cache
def _deliver_layout(rt, et, wt, pt, weighted):
    wp = import_warp()
    at = accumulator_type(rt)
    opening, ring_now, kept = _opening(rt, et, wt, weighted), _ring_now(), kept_row(pt)

    @wp.kernel(module='unique', enable_backward=False)
    def deliver(events: wp.array(dtype=et), data: wp.array(dtype=wt), offsets: wp.array(dtype=wp.int32),
                indptr: wp.array(dtype=pt), t: wp.array(dtype=wp.int32), out: wp.array2d(dtype=at)):
        i = wp.tid()
        fires, v, length, n, wstep = opening(events, data, i, out)
        if not fires:
            return
        back = (length - ring_now(t, length)) * n  # now * n + offset - L * n stays within int32
        se = kept(indptr, i, offsets.shape[0])
        # The ring's own (row-major) buffer seen flat: a position needs no division into row and column.
        flat = wp.array(ptr=out.ptr, shape=(length * n,), dtype=at)
        for k in range(se[0], se[1]):
            o = int(offsets[k])
            if o >= n and o < length * n:
                q = o - back
                if q < 0:
                    q += length * n
                wp.atomic_add(flat, q, at(data[k * wstep]) * v)

    return deliver


def csr_delay_deliver_layout_kernel(dtypes, *, shape, weighted, outs):
    """The warp spec for ``csr_delay_deliver_layout`` (packed offsets): ``out`` (the ring, in place) updated."""
    rt, et, wt, _, pt, _ = warp_types(dtypes)
    return WarpKernelSpec(_deliver_layout(rt, et, wt, pt, weighted), dim=lambda *shapes: shapes[1],
                          widen_outputs=True)
