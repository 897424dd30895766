"""Warp kernels (cpu and gpu) for the CSR operators.

One thread per output row for ``transpose=False`` (a gather, no atomics);
one thread per input row for ``transpose=True``, which returns at once
without an event (binary kernels) and scatters with ``atomic_add``
otherwise. Mm kernels add a thread per column of ``B``; mv is the
one-column case of the same body. Bad structure is dropped as on every
backend: entries with a column index outside ``[0, n)`` and rows whose
``indptr`` range is invalid are never read or written. Binary kernels select
event weights (``weighted_term``); float kernels multiply over every stored
entry, zeros of ``x`` included.
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
from eventjax.kernels.common.warp.typing import index_reader, kept_row, warp_types

__all__ = ['binary_csrmm_kernel', 'binary_csrmv_kernel', 'csrmm_kernel', 'csrmv_kernel']


@functools.cache
def _kernel(wt, it, xt, transpose, binary, matrix):
    wp = import_warp()
    as_index = index_reader(it)
    at, term, idle, xa, wa, aa, store, add = product_parts(wt, xt, binary, matrix)
    span = kept_row(it)

    @wp.kernel(module='unique', enable_backward=False)
    def gather(data: wp.array(dtype=wt), indices: wp.array(dtype=it), indptr: wp.array(dtype=it),
               x: xa, out: wa):
        i, c = wp.tid()
        n = x.shape[0]
        step = wp.where(data.shape[0] == 1, 0, 1)  # one shared weight, or one per entry
        start, end = span(indptr, i, indices.shape[0])
        acc = at(0.0)
        for k in range(start, end):
            j = as_index(indices[k])
            if j >= 0 and j < n:
                acc += term(at(data[k * step]), x, j, c)
        store(out, i, c, wt(acc))

    @wp.kernel(module='unique', enable_backward=False)
    def scatter(data: wp.array(dtype=wt), indices: wp.array(dtype=it), indptr: wp.array(dtype=it),
                x: xa, out: aa):
        i, c = wp.tid()
        if idle(x, i, c):
            return
        n = out.shape[0]
        step = wp.where(data.shape[0] == 1, 0, 1)
        start, end = span(indptr, i, indices.shape[0])
        for k in range(start, end):
            j = as_index(indices[k])
            if j >= 0 and j < n:
                add(out, j, c, term(at(data[k * step]), x, i, c))

    return scatter if transpose else gather


def _spec(dtypes, *, transpose, binary, matrix, outs):
    wt, it, _, xt = warp_types(dtypes)  # indptr has the dtype of indices
    return product_spec(_kernel(wt, it, xt, transpose, binary, matrix), transpose=transpose, x_position=3, outs=outs)


csrmv_kernel, binary_csrmv_kernel, csrmm_kernel, binary_csrmm_kernel = product_variants(_spec)
