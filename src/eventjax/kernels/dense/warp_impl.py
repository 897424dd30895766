"""Warp kernels (cpu and gpu) for the dense operators: one thread per output entry, no atomics.

Mv is the one-column case of the mm body.
"""

# No `from __future__ import annotations`: warp evaluates kernel annotations
# against the factory's local variables, which string annotations cannot see.
# Each kernel is its own warp module ('unique'): otherwise every new dtype
# variant would recompile every kernel of this file. No adjoints are needed:
# eventjax's own rules differentiate these operators.

import functools

from eventjax.backends.warp import WarpKernelSpec, import_warp
from eventjax.kernels.common.warp.columns import column_access, column_grid, operand_array
from eventjax.kernels.common.warp.typing import accumulator_type, event_test, warp_types

__all__ = ['binary_densemm_kernel', 'binary_densemv_kernel']


@functools.cache
def _kernel(wt, xt, transpose, matrix):
    wp = import_warp()
    at = accumulator_type(wt)
    is_event = event_test(xt)
    load, store = column_access(xt, matrix)[0], column_access(wt, matrix)[1]
    xa, wa = operand_array(xt, matrix), operand_array(wt, matrix)

    @wp.kernel(module='unique', enable_backward=False)
    def product(weights: wp.array2d(dtype=wt), spikes: xa, out: wa):
        # i is the output entry: a row of weights, or a column of them when transposed.
        i, c = wp.tid()
        acc = at(0.0)
        for j in range(spikes.shape[0]):
            if is_event(load(spikes, j, c)):
                if wp.static(transpose):
                    acc += at(weights[j, i])
                else:
                    acc += at(weights[i, j])
        store(out, i, c, wt(acc))

    return product


def binary_densemv_kernel(dtypes, *, transpose, outs):
    """The warp spec for ``binary_densemv`` with inputs of ``dtypes``."""
    return WarpKernelSpec(_kernel(*warp_types(dtypes), transpose, False), dim=column_grid(outs[0].shape))


def binary_densemm_kernel(dtypes, *, transpose, outs):
    """The warp spec for ``binary_densemm`` with inputs of ``dtypes``."""
    return WarpKernelSpec(_kernel(*warp_types(dtypes), transpose, True), dim=column_grid(outs[0].shape))
