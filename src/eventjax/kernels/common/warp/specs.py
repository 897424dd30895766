"""How the sparse families launch their warp kernels, and their four variants from one spec."""

from __future__ import annotations

from collections.abc import Callable

from eventjax.backends.warp import WarpKernelSpec
from eventjax.kernels.common.warp.columns import column_grid

__all__ = ['product_spec', 'product_variants']


def product_spec(kernel, *, transpose: bool, x_position: int, outs) -> WarpKernelSpec:
    """The launch of a gather (``transpose=False``) or scatter kernel; ``x`` is input number ``x_position``.

    A gather writes every output entry, a thread each; a scatter runs a
    thread per entry of ``x`` and accumulates into zeroed outputs, widened to
    float32 for float16 weights.

    Example:
        >>> spec = product_spec(kernel, transpose=True, x_position=2, outs=outs)  # doctest: +SKIP
    """
    dim = (lambda *shapes: column_grid(shapes[x_position])) if transpose else column_grid(outs[0].shape)
    return WarpKernelSpec(kernel, dim=dim, zero_outputs=transpose, widen_outputs=transpose)


def product_variants(spec: Callable) -> tuple[Callable, Callable, Callable, Callable]:
    """The generators ``(mv, binary mv, mm, binary mm)`` of ``spec(dtypes, *, transpose, binary, matrix, outs)``.

    Each takes the operators' static parameters ``(dtypes, *, shape, transpose, outs)``.

    Example:
        >>> mv, binary_mv, mm, binary_mm = product_variants(spec)  # doctest: +SKIP
    """
    def variant(binary: bool, matrix: bool) -> Callable:
        def kernel(dtypes, *, shape, transpose, outs):
            return spec(dtypes, transpose=transpose, binary=binary, matrix=matrix, outs=outs)
        return kernel
    return variant(False, False), variant(True, False), variant(False, True), variant(True, True)
