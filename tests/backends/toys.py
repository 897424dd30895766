"""Three toy primitives, each with a jax, numba, warp (cpu) and pallas kernel.

affine (y = 2x + 1, elementwise), total (the sum, shape (1,)) and
scatter_add (out[idx[i]] += val[i], duplicates accumulate). Warp kernels are
typed, so each is built once per dtype and cached.
"""

import functools

import jax
import jax.numpy as jnp
import numba
from jax.experimental import pallas as pl

import eventjax as ej
from eventjax.backends.numba.bridge import report_error
from eventjax.backends.warp.bridge import WarpKernelSpec, import_warp, warp_dtype

wp = import_warp()


# -- affine ------------------------------------------------------------------

@numba.njit
def _affine_numba(x, y):
    for i in range(x.size):
        y[i] = 2 * x[i] + 1


@functools.cache
def _affine_warp(dtype):
    wt = warp_dtype(dtype)

    @wp.kernel
    def affine(x: wp.array(dtype=wt), y: wp.array(dtype=wt)):
        i = wp.tid()
        y[i] = wt(2) * x[i] + wt(1)

    return affine


def _affine_pallas(outs):
    def body(x_ref, y_ref):
        y_ref[...] = 2 * x_ref[...] + 1

    return lambda x, *, interpret: pl.pallas_call(body, out_shape=outs[0], interpret=interpret)(x)


# -- total -------------------------------------------------------------------

@numba.njit
def _total_numba(x, out):
    acc = out.dtype.type(0)
    for i in range(x.size):
        acc += x[i]
    out[0] = acc


@functools.cache
def _total_warp(dtype):
    wt = warp_dtype(dtype)

    @wp.kernel
    def total(x: wp.array(dtype=wt), out: wp.array(dtype=wt)):
        wp.atomic_add(out, 0, x[wp.tid()])

    return total


def _total_pallas(outs):
    def body(x_ref, out_ref):
        out_ref[...] = jnp.full(out_ref.shape, jnp.sum(x_ref[...]), out_ref.dtype)

    return lambda x, *, interpret: pl.pallas_call(body, out_shape=outs[0], interpret=interpret)(x)


# -- scatter_add ---------------------------------------------------------------

@numba.njit
def _scatter_numba(idx, val, out, err):
    out[:] = 0
    for i in range(idx.size):
        j = idx[i]
        if j < 0 or j >= out.size:
            report_error(err, 'scatter_add: index out of range')
            return
        out[j] += val[i]


@functools.cache
def _scatter_warp(dtype):
    wt = warp_dtype(dtype)

    @wp.kernel
    def scatter_add(idx: wp.array(dtype=wp.int32), val: wp.array(dtype=wt), out: wp.array(dtype=wt)):
        i = wp.tid()
        wp.atomic_add(out, idx[i], val[i])

    return scatter_add


def _scatter_pallas(outs):
    def body(idx_ref, val_ref, out_ref):
        out_ref[...] = jnp.zeros(out_ref.shape, out_ref.dtype)

        def step(k, carry):
            j = idx_ref[k]
            out_ref[j] = out_ref[j] + val_ref[k]
            return carry

        jax.lax.fori_loop(0, idx_ref.shape[0], step, 0)

    return lambda idx, val, *, interpret: pl.pallas_call(body, out_shape=outs[0], interpret=interpret)(idx, val)


def _make(name, jax_kg, numba_kernel, warp_spec, pallas_kg):
    prim = ej.XLACustomKernel(name)
    prim.def_jax_kernel(jax_kg)
    prim.def_numba_kernel(lambda outs: numba_kernel)
    prim.def_warp_kernel(warp_spec, platform='cpu')
    prim.def_warp_kernel(warp_spec, platform='gpu')
    prim.def_pallas_kernel('gpu', pallas_kg)
    return prim


def make_toys():
    """Return {name: primitive}; the pallas kernel is on the cpu when interpret mode is on."""
    affine = _make('toy_affine', lambda outs: lambda x: (2 * x + 1,), _affine_numba,
                   lambda outs: WarpKernelSpec(_affine_warp(outs[0].dtype)), _affine_pallas)
    total = _make('toy_total', lambda outs: lambda x: (jnp.sum(x, keepdims=True),), _total_numba,
                  lambda outs: WarpKernelSpec(_total_warp(outs[0].dtype), zero_outputs=True), _total_pallas)
    scatter = _make(
        'toy_scatter_add',
        lambda outs: lambda idx, val: (jnp.zeros(outs[0].shape, outs[0].dtype).at[idx].add(val),),
        _scatter_numba,
        lambda outs: WarpKernelSpec(_scatter_warp(outs[0].dtype), dim=lambda i, v: i, zero_outputs=True),
        _scatter_pallas)
    return {'affine': affine, 'total': total, 'scatter_add': scatter}
