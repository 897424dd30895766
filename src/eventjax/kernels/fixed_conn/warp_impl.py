"""Warp FCN kernels (cpu and gpu), typed per weight dtype and cached.

Warp kernels are typed, but a kernel generator sees only the static
parameters and the outputs, not the operands' dtypes. :func:`register`
therefore wraps the bridge's generator in a canonical form: indices become
int32 (shapes beyond int32 are refused when the kernel is generated), events
become their 0/1 indicator in the weights' dtype, and float16 runs in float32.
So each weight dtype needs four kernels: gather or scatter, vector or matrix.

Row ``i`` gathers ``x[indices[i, j]]`` (``transpose=False``, one thread per
output row and column); ``transpose=True`` scatters ``w * x[i]`` with atomic
adds (one thread per connection and column), skipping zero entries of ``x``,
so non-events cost one read. Out-of-range indices are skipped: no read or
write out of bounds, as in the ``jax`` kernels.
"""

import functools

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ['fcn_spec', 'register']

_INT32_MAX = 2**31 - 1


def register(prim, kg, *, events: bool) -> None:
    """Register ``kg`` (returning a ``WarpKernelSpec``) as ``prim``'s warp kernel on cpu and gpu."""
    from eventjax.backends.warp_bridge import warp_kernel_generator

    for platform in ('cpu', 'gpu'):
        prim.def_kernel('warp', platform, _canonical(warp_kernel_generator(kg, platform), events))


def _canonical(kg2, events: bool):
    def generator(*, shape, transpose, outs):
        if max(shape) > _INT32_MAX:
            raise ValueError(f'The warp FCN kernels index with int32, so shape {shape} is too large; '
                             f"use backend='numba' or backend='jax'.")
        wide = tuple(jax.ShapeDtypeStruct(o.shape, np.float32 if o.dtype == np.float16 else o.dtype)
                     for o in outs)
        call = kg2(shape=shape, transpose=transpose, outs=wide)
        dtype = wide[0].dtype

        def kernel(weights, indices, x):
            x = (x if x.dtype == jnp.bool_ else x > 0).astype(dtype) if events else x.astype(dtype)
            ys = call(weights.astype(dtype), indices.astype(jnp.int32), x)
            return tuple(y.astype(o.dtype) for y, o in zip(ys, outs))

        return kernel

    return generator


def fcn_spec(*, transpose: bool, matrix: bool, outs):
    """The ``WarpKernelSpec`` of one FCN product for ``outs[0].dtype`` (float32/float64)."""
    from eventjax.backends.warp_bridge import WarpKernelSpec

    kernels = _kernels(np.dtype(outs[0].dtype).name)
    if not transpose:
        dim = (lambda w, idx, x: (idx[0], x[1])) if matrix else (lambda w, idx, x: idx[0])
        return WarpKernelSpec(kernels['gather_mm' if matrix else 'gather_mv'], dim=dim)
    dim = (lambda w, idx, x: (idx[0], idx[1], x[1])) if matrix else (lambda w, idx, x: idx)
    return WarpKernelSpec(kernels['scatter_mm' if matrix else 'scatter_mv'], dim=dim, zero_outputs=True)


@functools.cache
def _kernels(dtype_name: str) -> dict:
    from eventjax.backends.warp_bridge import import_warp, warp_dtype

    wp = import_warp()
    wt = warp_dtype(dtype_name)

    @wp.func
    def weight(w: wp.array2d(dtype=wt), i: int, j: int):
        # A (1, 1) weight array is one homogeneous weight.
        if w.shape[0] * w.shape[1] == 1:
            return w[0, 0]
        return w[i, j]

    @wp.kernel
    def gather_mv(w: wp.array2d(dtype=wt), idx: wp.array2d(dtype=wp.int32), x: wp.array(dtype=wt),
                  out: wp.array(dtype=wt)):
        i = wp.tid()
        acc = wt(0.0)
        for j in range(idx.shape[1]):
            c = idx[i, j]
            if c >= 0 and c < x.shape[0]:
                acc += weight(w, i, j) * x[c]
        out[i] = acc

    @wp.kernel
    def gather_mm(w: wp.array2d(dtype=wt), idx: wp.array2d(dtype=wp.int32), x: wp.array2d(dtype=wt),
                  out: wp.array2d(dtype=wt)):
        i, col = wp.tid()
        acc = wt(0.0)
        for j in range(idx.shape[1]):
            c = idx[i, j]
            if c >= 0 and c < x.shape[0]:
                acc += weight(w, i, j) * x[c, col]
        out[i, col] = acc

    @wp.kernel
    def scatter_mv(w: wp.array2d(dtype=wt), idx: wp.array2d(dtype=wp.int32), x: wp.array(dtype=wt),
                   out: wp.array(dtype=wt)):
        i, j = wp.tid()
        c = idx[i, j]
        if x[i] != wt(0.0) and c >= 0 and c < out.shape[0]:
            wp.atomic_add(out, c, weight(w, i, j) * x[i])

    @wp.kernel
    def scatter_mm(w: wp.array2d(dtype=wt), idx: wp.array2d(dtype=wp.int32), x: wp.array2d(dtype=wt),
                   out: wp.array2d(dtype=wt)):
        i, j, col = wp.tid()
        c = idx[i, j]
        if x[i, col] != wt(0.0) and c >= 0 and c < out.shape[0]:
            wp.atomic_add(out, c, col, weight(w, i, j) * x[i, col])

    return {'gather_mv': gather_mv, 'gather_mm': gather_mm, 'scatter_mv': scatter_mv, 'scatter_mm': scatter_mm}
