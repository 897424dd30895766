"""Warp kernels (cpu and gpu) for the CSR operators.

One thread per output row for ``transpose=False`` (a gather, no atomics);
one thread per input row for ``transpose=True``, which returns at once
without an event (binary kernels) and scatters with ``atomic_add``
otherwise. Mm kernels add a thread per column of ``B``. Bad structure is
dropped as on every backend: entries with a column index outside ``[0, n)``
and rows whose ``indptr`` range is invalid are never read or written. Binary
kernels select event weights (``weighted_term``); float kernels multiply over
every stored entry, zeros of ``x`` included.
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

__all__ = ['binary_csrmm_kernel', 'binary_csrmv_kernel', 'csrmm_kernel', 'csrmv_kernel']


@functools.cache
def _mv(wt, it, xt, transpose, binary):
    wp = import_warp()
    as_index = index_reader(it)
    at = accumulator_type(wt)
    term = weighted_term(xt, at, binary, False)
    idle = row_is_idle(xt, binary, False)

    @wp.kernel(module='unique', enable_backward=False)
    def gather(data: wp.array(dtype=wt), indices: wp.array(dtype=it), indptr: wp.array(dtype=it),
               x: wp.array(dtype=xt), out: wp.array(dtype=wt)):
        i = wp.tid()
        nnz = indices.shape[0]
        n = x.shape[0]
        step = 1
        if data.shape[0] == 1:
            step = 0
        start, end = int(indptr[i]), int(indptr[i + 1])
        acc = at(0.0)
        if start >= 0 and start <= end and end <= nnz:
            for k in range(start, end):
                j = as_index(indices[k])
                if j >= 0 and j < n:
                    acc += term(at(data[k * step]), x, j)
        out[i] = wt(acc)

    @wp.kernel(module='unique', enable_backward=False)
    def scatter(data: wp.array(dtype=wt), indices: wp.array(dtype=it), indptr: wp.array(dtype=it),
                x: wp.array(dtype=xt), out: wp.array(dtype=at)):
        i = wp.tid()
        if idle(x, i):
            return
        nnz = indices.shape[0]
        n = out.shape[0]
        step = 1
        if data.shape[0] == 1:
            step = 0
        start, end = int(indptr[i]), int(indptr[i + 1])
        if start < 0 or end < start or end > nnz:
            return
        for k in range(start, end):
            j = as_index(indices[k])
            if j >= 0 and j < n:
                wp.atomic_add(out, j, term(at(data[k * step]), x, i))

    return scatter if transpose else gather


@functools.cache
def _mm(wt, it, xt, transpose, binary):
    wp = import_warp()
    as_index = index_reader(it)
    at = accumulator_type(wt)
    term = weighted_term(xt, at, binary, True)
    idle = row_is_idle(xt, binary, True)

    @wp.kernel(module='unique', enable_backward=False)
    def gather(data: wp.array(dtype=wt), indices: wp.array(dtype=it), indptr: wp.array(dtype=it),
               x: wp.array2d(dtype=xt), out: wp.array2d(dtype=wt)):
        i, c = wp.tid()
        nnz = indices.shape[0]
        n = x.shape[0]
        step = 1
        if data.shape[0] == 1:
            step = 0
        start, end = int(indptr[i]), int(indptr[i + 1])
        acc = at(0.0)
        if start >= 0 and start <= end and end <= nnz:
            for k in range(start, end):
                j = as_index(indices[k])
                if j >= 0 and j < n:
                    acc += term(at(data[k * step]), x, j, c)
        out[i, c] = wt(acc)

    @wp.kernel(module='unique', enable_backward=False)
    def scatter(data: wp.array(dtype=wt), indices: wp.array(dtype=it), indptr: wp.array(dtype=it),
                x: wp.array2d(dtype=xt), out: wp.array2d(dtype=at)):
        i, c = wp.tid()
        if idle(x, i, c):
            return
        nnz = indices.shape[0]
        n = out.shape[0]
        step = 1
        if data.shape[0] == 1:
            step = 0
        start, end = int(indptr[i]), int(indptr[i + 1])
        if start < 0 or end < start or end > nnz:
            return
        for k in range(start, end):
            j = as_index(indices[k])
            if j >= 0 and j < n:
                wp.atomic_add(out, j, c, term(at(data[k * step]), x, i, c))

    return scatter if transpose else gather


def _spec(kernel_factory, dtypes, *, shape, transpose, binary, outs):
    wt, it, _, xt = warp_types(dtypes)  # indptr has the dtype of indices
    kernel = kernel_factory(wt, it, xt, transpose, binary)
    # Gathers write every output entry (a thread each); scatters run a
    # thread per entry of x and accumulate into zeros.
    dim = (lambda *shapes: shapes[3]) if transpose else outs[0].shape
    # Scatters accumulate into float32 outputs for float16 weights.
    return WarpKernelSpec(kernel, dim=dim, zero_outputs=transpose, widen_outputs=transpose)


def csrmv_kernel(dtypes, *, shape, transpose, outs):
    """The warp spec for ``csrmv`` with inputs of ``dtypes``."""
    return _spec(_mv, dtypes, shape=shape, transpose=transpose, binary=False, outs=outs)


def binary_csrmv_kernel(dtypes, *, shape, transpose, outs):
    """The warp spec for ``binary_csrmv`` with inputs of ``dtypes``."""
    return _spec(_mv, dtypes, shape=shape, transpose=transpose, binary=True, outs=outs)


def csrmm_kernel(dtypes, *, shape, transpose, outs):
    """The warp spec for ``csrmm`` with inputs of ``dtypes``."""
    return _spec(_mm, dtypes, shape=shape, transpose=transpose, binary=False, outs=outs)


def binary_csrmm_kernel(dtypes, *, shape, transpose, outs):
    """The warp spec for ``binary_csrmm`` with inputs of ``dtypes``."""
    return _spec(_mm, dtypes, shape=shape, transpose=transpose, binary=True, outs=outs)
