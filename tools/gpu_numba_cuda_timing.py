"""numba_cuda and cuda on the GPU: first call and steady per-call time of y = 2x (run by tools/gpu_check.sh).

The first call includes numba-cuda's PTX compile (or the disk cache's read),
the launcher's build or load, and the driver's load of the PTX; steady calls
are the median of repeated jitted calls, synchronised.
"""

import statistics
import time

import jax
import jax.numpy as jnp
import numpy as np
from numba import cuda

import eventjax as ej


@cuda.jit
def twice(x, y):
    i = cuda.grid(1)
    if i < y.size:
        y[i] = 2 * x[i]


TWICE_CU = r'''
#include "xla/ffi/api/ffi.h"
namespace ffi = xla::ffi;
__global__ void twice(const float* x, float* y, size_t n) {
  size_t i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) y[i] = 2 * x[i];
}
static ffi::Error Impl(cudaStream_t stream, ffi::Buffer<ffi::F32> x, ffi::ResultBuffer<ffi::F32> y) {
  size_t n = x.element_count();
  twice<<<(n + 255) / 256, 256, 0, stream>>>(x.typed_data(), y->typed_data(), n);
  return ffi::Error::Success();
}
XLA_FFI_DEFINE_HANDLER_SYMBOL(eventjax_timing_twice, Impl, ffi::Ffi::Bind()
    .Ctx<ffi::PlatformStream<cudaStream_t>>().Arg<ffi::Buffer<ffi::F32>>().Ret<ffi::Buffer<ffi::F32>>());
'''


def per_call_us(f, x, calls=500, repeats=5):
    samples = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        for _ in range(calls):
            y = f(x)
        jax.block_until_ready(y)
        samples.append((time.perf_counter() - t0) / calls * 1e6)
    return statistics.median(samples)


def main():
    p = ej.XLACustomKernel('gpu_timing_twice')
    p.def_numba_cuda_kernel(lambda outs: ej.NumbaCudaKernel(twice, launch_dims=lambda s: s[0]))
    p.def_cuda_kernel(lambda outs: ej.NativeKernel('eventjax_timing_twice', source=TWICE_CU))
    p.def_jax_kernel(lambda outs: lambda x: (2 * x,))
    print(f'device: {jax.devices()[0].device_kind}')
    print(f'{"backend":>10s} {"n":>10s} {"first call s":>13s} {"per call us":>12s}')
    for n in (1_000, 10_000_000):
        x = jnp.arange(n, dtype=jnp.float32)
        for backend in ('numba_cuda', 'cuda', 'jax'):
            f = jax.jit(lambda x, b=backend: p(x, outs=jax.ShapeDtypeStruct(x.shape, x.dtype), backend=b))
            t0 = time.perf_counter()
            y = jax.block_until_ready(f(x))
            first = time.perf_counter() - t0
            np.testing.assert_allclose(np.asarray(y[:1000]), 2 * np.arange(1000, dtype=np.float32))
            print(f'{backend:>10s} {n:10d} {first:13.3f} {per_call_us(f, x):12.1f}', flush=True)


if __name__ == '__main__':
    main()
