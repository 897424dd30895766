"""Warp kernels (cpu and gpu) for the FCN operators, typed from the operands' dtypes.

``transpose=False`` runs one thread per output row (and column of ``B``): a
gather over the row's ``k`` connections, no atomics. ``transpose=True`` runs
one thread per input row (and column): a binary one returns at once
without an event and otherwise scatters its ``k`` weights with
``atomic_add``, so the CPU cost is ``m`` cheap tests plus events x ``k``.
Mv is the one-column case of the mm body.
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

from eventjax.backends.warp import import_warp
from eventjax.kernels.common.warp.specs import product_spec, product_variants
from eventjax.kernels.common.warp.terms import product_parts
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
def _kernel(wt, it, xt, transpose, binary, matrix):
    wp = import_warp()
    as_index, weight = index_reader(it), _weight(wt)
    at, term, idle, xa, wa, aa, store, add = product_parts(wt, xt, binary, matrix)

    @wp.kernel(module='unique', enable_backward=False)
    def gather(w: wp.array2d(dtype=wt), indices: wp.array2d(dtype=it), x: xa, out: wa):
        i, col = wp.tid()
        n = x.shape[0]
        acc = at(0.0)
        for j in range(indices.shape[1]):
            c = as_index(indices[i, j])
            if c >= 0 and c < n:
                acc += term(weight(w, i, j), x, c, col)
        store(out, i, col, wt(acc))

    @wp.kernel(module='unique', enable_backward=False)
    def scatter(w: wp.array2d(dtype=wt), indices: wp.array2d(dtype=it), x: xa, out: aa):
        i, col = wp.tid()
        if idle(x, i, col):
            return
        n = out.shape[0]
        for j in range(indices.shape[1]):
            c = as_index(indices[i, j])
            if c >= 0 and c < n:
                add(out, c, col, term(weight(w, i, j), x, i, col))

    return scatter if transpose else gather


def _spec(dtypes, *, transpose, binary, matrix, outs):
    wt, it, xt = warp_types(dtypes)
    return product_spec(_kernel(wt, it, xt, transpose, binary, matrix), transpose=transpose, x_position=2, outs=outs)


fcnmv_kernel, binary_fcnmv_kernel, fcnmm_kernel, binary_fcnmm_kernel = product_variants(_spec)
