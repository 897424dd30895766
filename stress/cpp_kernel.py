"""8 threads call a user primitive with a C++ kernel while the main thread flips set_backend.

The primitive has a ``cpp`` kernel (C++ source through the FFI, ``x + 1``)
and a ``jax`` kernel (``x + 2``), so each result tells which ran. Workers call
it eager, under ``jit``, ``jit(vmap)`` and ``jit(grad)``; as in
``config_flip``, each value must be that of a backend current at some moment
during the call, and every gradient must be 1. The C++ library is built once
(or loaded from the disk cache) before the threads start.
"""

from __future__ import annotations

import functools
import time

import jax
import jax.numpy as jnp
import numpy as np

import eventjax as ej
from eventjax.backends.native import build as native_build
from stress.config_flip import flip_while_working
from stress.harness import Report

SOURCE = r'''
#include "xla/ffi/api/ffi.h"
namespace ffi = xla::ffi;

static ffi::Error AddOffset(ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y, float offset) {
  for (size_t i = 0; i < x.element_count(); ++i) y->typed_data()[i] = x.typed_data()[i] + offset;
  return ffi::Error::Success();
}

XLA_FFI_DEFINE_HANDLER_SYMBOL(eventjax_stress_add_offset, AddOffset,
    ffi::Ffi::Bind().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>().Attr<float>("offset"));
'''
VALUES = {'cpp': 1.0, 'jax': 2.0}
BACKENDS = ('cpp', 'jax')


@functools.cache
def make_primitive() -> ej.XLACustomKernel:
    prim = ej.XLACustomKernel('stress_cpp_add_offset')
    prim.def_cpp_kernel(lambda outs: ej.NativeKernel('eventjax_stress_add_offset', source=SOURCE,
                                                     attributes={'offset': np.float32(VALUES['cpp'])}))
    prim.def_jax_kernel(lambda outs: lambda x: (x + VALUES['jax'],))
    ej.defjvp(prim, lambda t, x, **params: [t])
    return prim


def primitives() -> tuple:
    """The primitives this scenario defines, for ``python -m stress`` to define before any scenario runs."""
    return (make_primitive(),) if native_build.cpp_toolchain().path else ()


def run(seconds: float, flips: int = 200, threads: int = 8) -> Report:
    report = Report('cpp_kernel')
    if not native_build.cpp_toolchain().path:
        report.extra['skipped'] = 'no C++ compiler'
        return report
    prim = make_primitive()
    x = jnp.zeros(4, jnp.float32)

    def call(x):
        return prim(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype))

    forms = (
        ('eager', lambda x: np.asarray(call(x))[0]),  # NumPy indexes: no JAX op per call
        ('jit', jax.jit(lambda x: call(x)[0])),
        ('jit(vmap)', jax.jit(lambda x: jax.vmap(call)(jnp.stack([x, x]))[1, 0])),
        ('jit(grad)', jax.jit(jax.grad(lambda x: call(x).sum()))),
    )
    for backend in BACKENDS:  # build (or load) the library and compile every form before the threads start
        ej.set_backend('cpu', backend)
        for _, fn in forms:
            jax.block_until_ready(fn(x))
    ej.set_backend('cpu', BACKENDS[0])
    marks = {'started': 0, 'committed': 0, 'stop': False}
    deadline = time.monotonic() + seconds

    def worker(i: int) -> None:
        label, fn = forms[i % len(forms)]
        while not marks['stop'] and time.monotonic() < deadline:
            first = marks['committed']
            got = np.asarray(fn(x))
            last = marks['started']
            if label == 'jit(grad)':
                ok, allowed = bool(np.all(got == 1.0)), [1.0]
            else:
                allowed = sorted({VALUES[BACKENDS[k % 2]] for k in range(first, last + 1)})
                ok = float(got) in allowed
            report.add(1, 1, None if ok else f'worker {i} ({label}): got {got}, flips {first}..{last} allow {allowed}',
                       wrong=not ok)

    flip_while_working(report, worker, marks, BACKENDS, seconds=seconds, flips=flips, threads=threads)
    return report
