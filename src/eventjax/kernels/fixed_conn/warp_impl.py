"""Warp kernels (cpu and gpu) for the FCN operators, typed from the operands' dtypes.

``transpose=False`` runs one thread per output row (and column of ``B``): a
gather over the row's ``k`` connections, no atomics. ``transpose=True`` runs
one thread per input row (and column): a binary one returns at once
without an event and otherwise scatters its ``k`` weights with
``atomic_add``, so the CPU cost is ``m`` cheap tests plus events x ``k``.
Weights are ``(m, k)`` or ``(1, 1)`` (homogeneous); float16 sums in float32.
A connection whose index is outside ``[0, n)`` is dropped as on every
backend, never read or written. Binary kernels select event weights
(``weighted_term``); float kernels multiply over every stored connection.
"""

# No `from __future__ import annotations`: warp evaluates kernel annotations
# against the factory's local variables, which string annotations cannot see.
# Each kernel is its own warp module ('unique'): otherwise every new dtype
# variant would recompile every kernel of this file. No adjoints are needed:
# eventjax's own rules differentiate these operators.


import functools

from eventjax.backends.warp import WarpKernelSpec, import_warp
from eventjax.kernels.common.warp.terms import row_is_idle, weighted_term
from eventjax.kernels.common.warp.typing import accumulator_type, index_reader, warp_types

__all__ = ['binary_fcnmm_kernel', 'binary_fcnmv_kernel', 'fcnmm_kernel', 'fcnmv_kernel']


@functools.cache
def _weight(wt):
    wp = import_warp()
    at = accumulator_type(wt)

    @wp.func
    def weight(w: wp.array2d(dtype=wt), i: int, j: int) -> at:
        # A (1, 1) weight array is one weight shared by every connection.
        if w.shape[0] * w.shape[1] == 1:
            return at(w[0, 0])
        return at(w[i, j])

    return weight


@functools.cache
def _mv(wt, it, xt, transpose, binary):
    wp = import_warp()
    as_index = index_reader(it)
    at = accumulator_type(wt)
    weight = _weight(wt)
    term = weighted_term(xt, at, binary, False)
    idle = row_is_idle(xt, binary, False)

    @wp.kernel(module='unique', enable_backward=False)
    def gather(w: wp.array2d(dtype=wt), indices: wp.array2d(dtype=it), x: wp.array(dtype=xt),
               out: wp.array(dtype=wt)):
        i = wp.tid()
        n = x.shape[0]
        acc = at(0.0)
        for j in range(indices.shape[1]):
            c = as_index(indices[i, j])
            if c >= 0 and c < n:
                acc += term(weight(w, i, j), x, c)
        out[i] = wt(acc)

    @wp.kernel(module='unique', enable_backward=False)
    def scatter(w: wp.array2d(dtype=wt), indices: wp.array2d(dtype=it), x: wp.array(dtype=xt),
                out: wp.array(dtype=at)):
        i = wp.tid()
        if idle(x, i):
            return
        n = out.shape[0]
        for j in range(indices.shape[1]):
            c = as_index(indices[i, j])
            if c >= 0 and c < n:
                wp.atomic_add(out, c, term(weight(w, i, j), x, i))

    return scatter if transpose else gather


@functools.cache
def _mm(wt, it, xt, transpose, binary):
    wp = import_warp()
    as_index = index_reader(it)
    at = accumulator_type(wt)
    weight = _weight(wt)
    term = weighted_term(xt, at, binary, True)
    idle = row_is_idle(xt, binary, True)

    @wp.kernel(module='unique', enable_backward=False)
    def gather(w: wp.array2d(dtype=wt), indices: wp.array2d(dtype=it), x: wp.array2d(dtype=xt),
               out: wp.array2d(dtype=wt)):
        i, col = wp.tid()
        n = x.shape[0]
        acc = at(0.0)
        for j in range(indices.shape[1]):
            c = as_index(indices[i, j])
            if c >= 0 and c < n:
                acc += term(weight(w, i, j), x, c, col)
        out[i, col] = wt(acc)

    @wp.kernel(module='unique', enable_backward=False)
    def scatter(w: wp.array2d(dtype=wt), indices: wp.array2d(dtype=it), x: wp.array2d(dtype=xt),
                out: wp.array2d(dtype=at)):
        i, col = wp.tid()
        if idle(x, i, col):
            return
        n = out.shape[0]
        for j in range(indices.shape[1]):
            c = as_index(indices[i, j])
            if c >= 0 and c < n:
                wp.atomic_add(out, c, col, term(weight(w, i, j), x, i, col))

    return scatter if transpose else gather


def _spec(kernel_factory, dtypes, *, transpose, binary, outs):
    wt, it, xt = warp_types(dtypes)
    kernel = kernel_factory(wt, it, xt, transpose, binary)
    # Gathers write every output entry (a thread each); scatters run a
    # thread per entry of x and accumulate into zeros.
    dim = (lambda *shapes: shapes[2]) if transpose else outs[0].shape
    # Scatters accumulate into float32 outputs for float16 weights.
    return WarpKernelSpec(kernel, dim=dim, zero_outputs=transpose, widen_outputs=transpose)


def fcnmv_kernel(dtypes, *, shape, transpose, outs):
    """The warp spec for ``fcnmv`` with inputs of ``dtypes``."""
    return _spec(_mv, dtypes, transpose=transpose, binary=False, outs=outs)


def binary_fcnmv_kernel(dtypes, *, shape, transpose, outs):
    """The warp spec for ``binary_fcnmv`` with inputs of ``dtypes``."""
    return _spec(_mv, dtypes, transpose=transpose, binary=True, outs=outs)


def fcnmm_kernel(dtypes, *, shape, transpose, outs):
    """The warp spec for ``fcnmm`` with inputs of ``dtypes``."""
    return _spec(_mm, dtypes, transpose=transpose, binary=False, outs=outs)


def binary_fcnmm_kernel(dtypes, *, shape, transpose, outs):
    """The warp spec for ``binary_fcnmm`` with inputs of ``dtypes``."""
    return _spec(_mm, dtypes, transpose=transpose, binary=True, outs=outs)
