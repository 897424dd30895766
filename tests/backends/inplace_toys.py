"""A toy in-place primitive, ``bump``: ``w[rows] += 1``, with a jax, numba, warp (cpu), cpp and pallas kernel.

Each kernel writes only the rows it is given into the output, which the call
aliases to ``w``: the result is right only if the output starts out holding
``w`` (the bridge honoured the alias).
"""

import functools

import jax
import numba
from jax.experimental import pallas as pl

import eventjax as ej
from eventjax.backends.warp.bridge import ByInputDtypes, WarpKernelSpec, import_warp, warp_dtype

wp = import_warp()


@numba.njit
def _bump_numba(w, rows, out):
    for r in rows:
        out[r] += 1


@functools.cache
def _bump_warp(dtype):
    wt = warp_dtype(dtype)

    # w is updated in place: the kernel gets it once, as its output parameter.
    @wp.kernel
    def bump(rows: wp.array(dtype=wp.int32), out: wp.array(dtype=wt)):
        i = wp.tid()
        wp.atomic_add(out, rows[i], wt(1))

    return bump


def _bump_pallas(outs, input_output_aliases):
    def body(w_ref, rows_ref, out_ref):
        # Only the rows given are written: the others keep the aliased input's values.
        def one(i, carry):
            r = rows_ref[i]
            out_ref[r] = out_ref[r] + 1
            return carry

        jax.lax.fori_loop(0, rows_ref.shape[0], one, 0)

    def call(w, rows, *, interpret):
        return pl.pallas_call(body, out_shape=outs[0], interpret=interpret,
                              input_output_aliases=input_output_aliases)(w, rows)

    return call


BUMP_CPP = r"""
#include "xla/ffi/api/ffi.h"
namespace ffi = xla::ffi;
// Only the rows given are written: the others keep the aliased input's values.
static ffi::Error Bump(ffi::Buffer<ffi::F32> w, ffi::Buffer<ffi::S32> rows, ffi::ResultBuffer<ffi::F32> out) {
  for (size_t i = 0; i < rows.element_count(); ++i) out->typed_data()[rows.typed_data()[i]] += 1.0f;
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(eventjax_test_bump, Bump, ffi::Ffi::Bind()
    .Arg<ffi::Buffer<ffi::F32>>().Arg<ffi::Buffer<ffi::S32>>().Ret<ffi::Buffer<ffi::F32>>());
"""


def make_bump(name):
    """A fresh ``bump`` primitive with every CPU kernel (pallas in interpret mode)."""
    p = ej.XLACustomKernel(name)
    p.def_jax_kernel(lambda outs: lambda w, rows: (w.at[rows].add(1),))
    p.def_numba_kernel(lambda outs: _bump_numba)
    p.def_warp_kernel(lambda outs: ByInputDtypes(
        lambda dtypes: WarpKernelSpec(_bump_warp(dtypes[0]), dim=lambda w, rows: rows)), platform='cpu')
    p.def_cpp_kernel(lambda outs: ej.NativeKernel('eventjax_test_bump', source=BUMP_CPP))
    p.def_pallas_kernel('gpu', _bump_pallas)  # the cpu gets it too, in interpret mode (tests turn it on)
    return p


def bump(p, w, rows, backend):
    """``w`` with ``rows`` raised by one, computed in place."""
    return p(w, rows, outs=(jax.ShapeDtypeStruct(w.shape, w.dtype),), input_output_aliases={0: 0},
             backend=backend)[0]
