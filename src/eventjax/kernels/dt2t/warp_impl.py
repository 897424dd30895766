"""Warp kernels (cpu and gpu) of the per-synapse products.

``csr_dt2t``: one thread per (batch, row) for ``transpose=False`` (a row
without an event only zeroes its entries), one per (batch, stored entry)
for ``transpose=True``. ``csr_sddmm``: one thread per row, one dot product
per stored entry, float16 summed in float32. Outputs start zeroed, so an
entry of no row stays 0; a column outside ``[0, n)`` is never read.
"""

# No `from __future__ import annotations`: warp evaluates kernel annotations
# against the factory's local variables, which string annotations cannot see.

import functools

from eventjax.backends.warp import WarpKernelSpec, import_warp
from eventjax.kernels.common.warp.typing import accumulator_type, event_test, index_reader, warp_types

__all__ = ['csr_dt2t_kernel', 'csr_sddmm_kernel']


@functools.cache
def _factor(yt, wt, events):
    """A ``wp.func``: entry ``w`` times ``y`` (``w`` where ``y`` is an event, 0 elsewhere)."""
    wp = import_warp()
    if events:
        is_event = event_test(yt)

        @wp.func
        def factor(w: wt, y: yt) -> wt:
            if is_event(y):
                return w
            return wt(0.0)
    else:
        @wp.func
        def factor(w: wt, y: yt) -> wt:
            return w * wt(y)
    return factor


@functools.cache
def _dt2t(wt, it, yt, transpose, events):
    wp = import_warp()
    as_index = index_reader(it)
    factor = _factor(yt, wt, events)

    @wp.kernel(module='unique', enable_backward=False)
    def by_row(w: wp.array2d(dtype=wt), indices: wp.array(dtype=it), indptr: wp.array(dtype=it),
               y: wp.array2d(dtype=yt), out: wp.array2d(dtype=wt)):
        b, i = wp.tid()
        for k in range(int(indptr[i]), int(indptr[i + 1])):
            out[b, k] = factor(w[b, k], y[b, i])

    @wp.kernel(module='unique', enable_backward=False)
    def by_column(w: wp.array2d(dtype=wt), indices: wp.array(dtype=it), indptr: wp.array(dtype=it),
                  y: wp.array2d(dtype=yt), out: wp.array2d(dtype=wt)):
        b, k = wp.tid()
        j = as_index(indices[k])
        if k >= int(indptr[0]) and k < int(indptr[indptr.shape[0] - 1]) and j >= 0 and j < y.shape[1]:
            out[b, k] = factor(w[b, k], y[b, j])

    return by_column if transpose else by_row


def csr_dt2t_kernel(dtypes, *, shape, transpose, events, outs):
    """The warp spec of ``csr_dt2t`` for inputs of ``dtypes``."""
    wt, it, _, yt = warp_types(dtypes)
    rows = shape[0]
    dim = (lambda w, i, p, y: w) if transpose else (lambda w, i, p, y: (w[0], rows))
    return WarpKernelSpec(_dt2t(wt, it, yt, transpose, events), dim=dim, zero_outputs=True)


@functools.cache
def _sddmm(wt, it):
    wp = import_warp()
    as_index = index_reader(it)
    at = accumulator_type(wt)

    @wp.kernel(module='unique', enable_backward=False)
    def sddmm(a: wp.array2d(dtype=wt), bt: wp.array2d(dtype=wt), indices: wp.array(dtype=it),
              indptr: wp.array(dtype=it), out: wp.array(dtype=wt)):
        i = wp.tid()
        for k in range(int(indptr[i]), int(indptr[i + 1])):
            j = as_index(indices[k])
            if j >= 0 and j < bt.shape[0]:
                total = at(0.0)
                for t in range(a.shape[1]):
                    total += at(a[i, t]) * at(bt[j, t])
                out[k] = wt(total)

    return sddmm


def csr_sddmm_kernel(dtypes, *, shape, outs):
    """The warp spec of ``csr_sddmm``: a thread per row."""
    wt, _, it, _ = warp_types(dtypes)
    return WarpKernelSpec(_sddmm(wt, it), dim=shape[0], zero_outputs=True)
