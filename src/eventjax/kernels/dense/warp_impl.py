"""Warp kernels (cpu and gpu) for the dense operators: one thread per output entry, no atomics."""

# No `from __future__ import annotations`: warp evaluates kernel annotations
# against the factory's local variables, which string annotations cannot see.
# Each kernel is its own warp module ('unique'): otherwise every new dtype
# variant would recompile every kernel of this file. No adjoints are needed:
# eventjax's own rules differentiate these operators.

import functools

from eventjax.backends.warp import WarpKernelSpec, import_warp
from eventjax.kernels.common.warp.typing import accumulator_type, event_test, warp_types

__all__ = ['binary_densemm_kernel', 'binary_densemv_kernel']


@functools.cache
def _mv(wt, xt, transpose):
    wp = import_warp()
    at = accumulator_type(wt)
    is_event = event_test(xt)

    @wp.kernel(module='unique', enable_backward=False)
    def mv(weights: wp.array2d(dtype=wt), spikes: wp.array(dtype=xt), out: wp.array(dtype=wt)):
        i = wp.tid()
        acc = at(0.0)
        for j in range(spikes.shape[0]):
            if is_event(spikes[j]):
                acc += at(weights[i, j])
        out[i] = wt(acc)

    @wp.kernel(module='unique', enable_backward=False)
    def mv_transposed(weights: wp.array2d(dtype=wt), spikes: wp.array(dtype=xt), out: wp.array(dtype=wt)):
        j = wp.tid()
        acc = at(0.0)
        for i in range(spikes.shape[0]):
            if is_event(spikes[i]):
                acc += at(weights[i, j])
        out[j] = wt(acc)

    return mv_transposed if transpose else mv


@functools.cache
def _mm(wt, xt, transpose):
    wp = import_warp()
    at = accumulator_type(wt)
    is_event = event_test(xt)

    @wp.kernel(module='unique', enable_backward=False)
    def mm(weights: wp.array2d(dtype=wt), spikes: wp.array2d(dtype=xt), out: wp.array2d(dtype=wt)):
        i, c = wp.tid()
        acc = at(0.0)
        for j in range(spikes.shape[0]):
            if is_event(spikes[j, c]):
                acc += at(weights[i, j])
        out[i, c] = wt(acc)

    @wp.kernel(module='unique', enable_backward=False)
    def mm_transposed(weights: wp.array2d(dtype=wt), spikes: wp.array2d(dtype=xt), out: wp.array2d(dtype=wt)):
        j, c = wp.tid()
        acc = at(0.0)
        for i in range(spikes.shape[0]):
            if is_event(spikes[i, c]):
                acc += at(weights[i, j])
        out[j, c] = wt(acc)

    return mm_transposed if transpose else mm


def binary_densemv_kernel(dtypes, *, transpose, outs):
    """The warp spec for ``binary_densemv`` with inputs of ``dtypes``."""
    return WarpKernelSpec(_mv(*warp_types(dtypes), transpose), dim=outs[0].shape)


def binary_densemm_kernel(dtypes, *, transpose, outs):
    """The warp spec for ``binary_densemm`` with inputs of ``dtypes``."""
    return WarpKernelSpec(_mm(*warp_types(dtypes), transpose), dim=outs[0].shape)
