"""Warp kernels (cpu and gpu) for the plasticity updates.

The weights are updated in place: the bridge passes them once, as the
kernel's in/out ``out`` parameter (the call aliases output 0 to input 0), so
a kernel lists the other inputs, the bounds ``lo``/``hi``, then ``out``. One
thread per row (on pre) or per column (on post) returns at once without an
event; dense kernels run one thread per matrix entry. Bad structure is
dropped as on every backend (indices out of range are skipped). Bounds are
compares, so a NaN stays NaN.
"""

# No `from __future__ import annotations`: warp evaluates kernel annotations
# against the factory's local variables, which string annotations cannot see.

import functools
import math

from eventjax.backends.warp import WarpKernelSpec, import_warp
from eventjax.kernels.common.warp.typing import event_test, index_reader, warp_types

__all__ = ['csr2csc_on_post_kernel', 'csr_on_pre_kernel', 'dense_on_post_kernel', 'dense_on_pre_kernel',
           'fcn_on_pre_kernel']


def _scalars(w_min, w_max):
    return {'lo': -math.inf if w_min is None else float(w_min), 'hi': math.inf if w_max is None else float(w_max)}


def _bound_type(wt):
    """The bounds' scalar type: warp's FFI cannot pass a float16 scalar, so float16 weights take float64 bounds."""
    wp = import_warp()
    return wp.float64 if wt is wp.float16 else wt


@functools.cache
def _bounded(wt):
    wp = import_warp()
    bt = _bound_type(wt)

    @wp.func
    def bounded(v: wt, lo: bt, hi: bt) -> wt:
        # Rounded once, from the Python number, as the jax and numba kernels round it.
        if v < wt(lo):
            return wt(lo)
        if v > wt(hi):
            return wt(hi)
        return v

    return bounded


@functools.cache
def _segment_update(wt, it, pt, tt, positioned):
    """A ``wp.func`` updating segment ``e``: ``out[p(c)] += trace[indices[c]]`` over its entries ``c``, bounded.

    ``p(c)`` is ``positions[c]`` when ``positioned`` (a column of the column
    view names its weights through them), else ``c``.
    """
    wp = import_warp()
    as_index, as_position = index_reader(it), index_reader(pt)
    bounded, bt = _bounded(wt), _bound_type(wt)

    @wp.func
    def update(indices: wp.array(dtype=it), indptr: wp.array(dtype=it), positions: wp.array(dtype=pt),
               trace: wp.array(dtype=tt), e: int, lo: bt, hi: bt, out: wp.array(dtype=wt)):
        n = trace.shape[0]
        size = out.shape[0]
        start, end = wp.max(int(indptr[e]), 0), wp.min(int(indptr[e + 1]), indices.shape[0])
        for c in range(start, end):
            j = as_index(indices[c])
            k = c
            if wp.static(positioned):
                k = as_position(positions[c])
            if j >= 0 and j < n and k >= 0 and k < size:
                out[k] = bounded(out[k] + wt(trace[j]), lo, hi)

    return update


@functools.cache
def _csr_on_pre(wt, it, st, tt):
    wp = import_warp()
    is_event, bt = event_test(st), _bound_type(wt)
    update = _segment_update(wt, it, it, tt, False)

    @wp.kernel(module='unique', enable_backward=False)
    def kernel(indices: wp.array(dtype=it), indptr: wp.array(dtype=it), spikes: wp.array(dtype=st),
               trace: wp.array(dtype=tt), lo: bt, hi: bt, out: wp.array(dtype=wt)):
        i = wp.tid()
        if is_event(spikes[i]):
            update(indices, indptr, indices, trace, i, lo, hi, out)

    return kernel


@functools.cache
def _csr2csc_on_post(wt, it, pt, tt, st):
    wp = import_warp()
    is_event, bt = event_test(st), _bound_type(wt)
    update = _segment_update(wt, it, pt, tt, True)

    @wp.kernel(module='unique', enable_backward=False)
    def kernel(indices: wp.array(dtype=it), indptr: wp.array(dtype=it), weight_indices: wp.array(dtype=pt),
               trace: wp.array(dtype=tt), spikes: wp.array(dtype=st), lo: bt, hi: bt, out: wp.array(dtype=wt)):
        j = wp.tid()
        if is_event(spikes[j]):
            update(indices, indptr, weight_indices, trace, j, lo, hi, out)

    return kernel


@functools.cache
def _dense(wt, st, tt, on_pre):
    """One thread per entry ``(i, j)``: the event is ``spikes[i]`` and the trace ``trace[j]`` on pre, swapped on post.

    The operands keep each mode's input order: ``(spikes, trace)`` on pre, ``(trace, spikes)`` on post.
    """
    wp = import_warp()
    is_event, bounded, bt = event_test(st), _bounded(wt), _bound_type(wt)
    ft, lt = (st, tt) if on_pre else (tt, st)

    @wp.kernel(module='unique', enable_backward=False)
    def kernel(first: wp.array(dtype=ft), last: wp.array(dtype=lt), lo: bt, hi: bt, out: wp.array2d(dtype=wt)):
        i, j = wp.tid()
        # Only the taken branch is compiled, so each mode reads its own operands as before.
        if wp.static(on_pre):
            fire = is_event(first[i])
        else:
            fire = is_event(last[j])
        if fire:
            if wp.static(on_pre):
                t = wt(last[j])
            else:
                t = wt(first[i])
            out[i, j] = bounded(out[i, j] + t, lo, hi)

    return kernel


@functools.cache
def _fcn_on_pre(wt, it, st, tt):
    wp = import_warp()
    as_index = index_reader(it)
    is_event, bounded, bt = event_test(st), _bounded(wt), _bound_type(wt)

    @wp.kernel(module='unique', enable_backward=False)
    def kernel(indices: wp.array2d(dtype=it), spikes: wp.array(dtype=st), trace: wp.array(dtype=tt),
               lo: bt, hi: bt, out: wp.array2d(dtype=wt)):
        i, c = wp.tid()
        if not is_event(spikes[i]):
            return
        j = as_index(indices[i, c])
        if j >= 0 and j < trace.shape[0]:
            out[i, c] = bounded(out[i, c] + wt(trace[j]), lo, hi)

    return kernel


def csr_on_pre_kernel(dtypes, *, outs, w_min=None, w_max=None, **_):
    """One thread per row of the weights' CSR structure."""
    wt, it, _, st, tt = warp_types(dtypes)
    return WarpKernelSpec(_csr_on_pre(wt, it, st, tt), dim=lambda w, idx, ptr, spk, tr: spk,
                          scalars=_scalars(w_min, w_max))


def csr2csc_on_post_kernel(dtypes, *, outs, w_min=None, w_max=None, **_):
    """One thread per column of the column view."""
    wt, it, _, pt, tt, st = warp_types(dtypes)
    return WarpKernelSpec(_csr2csc_on_post(wt, it, pt, tt, st), dim=lambda w, idx, ptr, pos, tr, spk: spk,
                          scalars=_scalars(w_min, w_max))


def dense_on_pre_kernel(dtypes, *, outs, w_min=None, w_max=None, **_):
    """One thread per matrix entry."""
    wt, st, tt = warp_types(dtypes)
    return WarpKernelSpec(_dense(wt, st, tt, True), dim=lambda w, spk, tr: w, scalars=_scalars(w_min, w_max))


def dense_on_post_kernel(dtypes, *, outs, w_min=None, w_max=None, **_):
    """One thread per matrix entry."""
    wt, tt, st = warp_types(dtypes)
    return WarpKernelSpec(_dense(wt, st, tt, False), dim=lambda w, tr, spk: w, scalars=_scalars(w_min, w_max))


def fcn_on_pre_kernel(dtypes, *, outs, w_min=None, w_max=None, **_):
    """One thread per stored connection."""
    wt, it, st, tt = warp_types(dtypes)
    return WarpKernelSpec(_fcn_on_pre(wt, it, st, tt), dim=lambda w, idx, spk, tr: w,
                          scalars=_scalars(w_min, w_max))
