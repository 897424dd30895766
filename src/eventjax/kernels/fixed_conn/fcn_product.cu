// The FCN products for the cuda backend: fcnmv, fcnmm, binary_fcnmv, binary_fcnmm, on XLA's stream.
// Row i of A holds kc connections: A[i, indices[i, j]] += weights[i, j].
// One thread per row of A. transpose=False: thread i gathers row i. transpose=True: thread i adds
// row i's terms with atomics into a float32/64 scratch buffer (float16 sums in float32), which a
// second kernel casts into the output; in binary products a row without an event returns at once.
#include "event_kernels.h"

namespace {

using ej::ffi::AnyBuffer;
using ej::ffi::Error;
using ej::ffi::Result;

constexpr int kThreads = 256;

template <bool Binary, typename W, typename I, typename X>
__global__ void gather(const W* w, bool homo, const I* idx, const X* x, W* out, int64_t m, int64_t n, int64_t k,
                       int64_t kc) {
  using A = typename ej::Acc<W>::type;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= m) return;
  const int64_t lo = i * kc, hi = lo + kc;
  for (int64_t j = 0; j < k; ++j) {
    A acc = A(0);
    for (int64_t e = lo; e < hi; ++e) {
      const I c = idx[e];
      if (ej::valid_column(c, n)) acc += ej::term<Binary>(static_cast<A>(w[homo ? 0 : e]), x[c * k + j]);
    }
    out[i * k + j] = static_cast<W>(acc);
  }
}

template <bool Binary, typename W, typename I, typename X, typename A>
__global__ void scatter(const W* w, bool homo, const I* idx, const X* x, A* acc, int64_t m, int64_t n, int64_t k,
                        int64_t kc) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= m) return;
  const X* xi = x + i * k;
  if (Binary) {
    bool any = false;
    for (int64_t j = 0; j < k && !any; ++j) any = ej::is_event(xi[j]);
    if (!any) return;
  }
  for (int64_t e = i * kc, hi = e + kc; e < hi; ++e) {
    const I c = idx[e];
    if (!ej::valid_column(c, n)) continue;
    const A we = static_cast<A>(w[homo ? 0 : e]);
    for (int64_t j = 0; j < k; ++j) atomicAdd(acc + c * k + j, ej::term<Binary>(we, xi[j]));
  }
}

template <typename W, typename A> __global__ void cast_out(const A* acc, W* out, int64_t size) {
  const int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (j < size) out[j] = static_cast<W>(acc[j]);
}

inline unsigned blocks(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

Error FcnProduct(cudaStream_t stream, ej::ffi::ScratchAllocator scratch, AnyBuffer data, AnyBuffer indices,
                 AnyBuffer x, Result<AnyBuffer> out, int64_t m, int64_t n, bool transpose, bool binary) {
  const auto idims = indices.dimensions();
  if (idims.size() != 2 || idims[0] != m) return Error::InvalidArgument("FCN product (cuda): indices must be (m, k)");
  const int64_t kc = idims[1];
  const auto dims = x.dimensions();
  const int64_t k = dims.size() == 2 ? dims[1] : 1;
  const bool homo = data.element_count() == 1;
  Error status = ej::dispatch(data, indices, x, [&](auto wt, auto it, auto xt) {
    using W = typename decltype(wt)::type;
    using I = typename decltype(it)::type;
    using X = typename decltype(xt)::type;
    using A = typename ej::Acc<W>::type;
    const W* w = static_cast<const W*>(data.untyped_data());
    const I* idx = static_cast<const I*>(indices.untyped_data());
    const X* xs = static_cast<const X*>(x.untyped_data());
    W* y = static_cast<W*>(out->untyped_data());
    if (!transpose) {
      if (m > 0 && binary) gather<true><<<blocks(m), kThreads, 0, stream>>>(w, homo, idx, xs, y, m, n, k, kc);
      if (m > 0 && !binary) gather<false><<<blocks(m), kThreads, 0, stream>>>(w, homo, idx, xs, y, m, n, k, kc);
      return Error::Success();
    }
    const int64_t size = n * k;
    if (size == 0) return Error::Success();
    auto buffer = scratch.Allocate(sizeof(A) * static_cast<size_t>(size), alignof(A));
    if (!buffer.has_value()) return Error(ej::ffi::ErrorCode::kResourceExhausted, "FCN product (cuda): no scratch");
    A* acc = static_cast<A*>(*buffer);
    cudaMemsetAsync(acc, 0, sizeof(A) * static_cast<size_t>(size), stream);
    if (m > 0 && binary) scatter<true><<<blocks(m), kThreads, 0, stream>>>(w, homo, idx, xs, acc, m, n, k, kc);
    if (m > 0 && !binary) scatter<false><<<blocks(m), kThreads, 0, stream>>>(w, homo, idx, xs, acc, m, n, k, kc);
    cast_out<<<blocks(size), kThreads, 0, stream>>>(acc, y, size);
    return Error::Success();
  });
  if (status.failure()) return status;
  const cudaError_t launched = cudaGetLastError();
  return launched == cudaSuccess ? Error::Success() : Error::Internal(cudaGetErrorString(launched));
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(eventjax_fcn_product, FcnProduct,
                              ej::ffi::Ffi::Bind()
                                  .Ctx<ej::ffi::PlatformStream<cudaStream_t>>()
                                  .Ctx<ej::ffi::ScratchAllocator>()
                                  .Arg<AnyBuffer>()
                                  .Arg<AnyBuffer>()
                                  .Arg<AnyBuffer>()
                                  .Ret<AnyBuffer>()
                                  .Attr<int64_t>("m")
                                  .Attr<int64_t>("n")
                                  .Attr<bool>("transpose")
                                  .Attr<bool>("binary"));
