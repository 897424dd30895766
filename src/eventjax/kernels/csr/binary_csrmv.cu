// binary_csrmv for the cuda backend: one thread per row of A, on XLA's stream.
// transpose=False: thread i gathers row i. transpose=True: thread i returns at once
// unless row i has an event, then adds its weights into a float32/64 scratch buffer
// (float16 sums in float32) that a second kernel casts into the output.
#include "event_kernels.h"

namespace {

using ej::ffi::AnyBuffer;
using ej::ffi::Error;
using ej::ffi::Result;

constexpr int kThreads = 256;

template <typename I> __device__ inline int64_t bound(I v, int64_t nnz) {
  const int64_t x = static_cast<int64_t>(v);
  return x < 0 ? 0 : (x > nnz ? nnz : x);
}

template <typename W, typename I, typename S>
__global__ void gather(const W* w, bool homo, const I* idx, const I* ptr, const S* s, W* out, int64_t m, int64_t n,
                       int64_t nnz) {
  using A = typename ej::Acc<W>::type;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= m) return;
  A acc = A(0);
  for (int64_t k = bound(ptr[i], nnz), hi = bound(ptr[i + 1], nnz); k < hi; ++k) {
    const I c = idx[k];
    if (ej::valid_column(c, n) && ej::is_event(s[c])) acc += static_cast<A>(w[homo ? 0 : k]);
  }
  out[i] = static_cast<W>(acc);
}

template <typename W, typename I, typename S, typename A>
__global__ void scatter(const W* w, bool homo, const I* idx, const I* ptr, const S* s, A* acc, int64_t m, int64_t n,
                        int64_t nnz) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= m || !ej::is_event(s[i])) return;
  for (int64_t k = bound(ptr[i], nnz), hi = bound(ptr[i + 1], nnz); k < hi; ++k) {
    const I c = idx[k];
    if (ej::valid_column(c, n)) atomicAdd(acc + c, static_cast<A>(w[homo ? 0 : k]));
  }
}

template <typename W, typename A> __global__ void cast_out(const A* acc, W* out, int64_t n) {
  const int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (j < n) out[j] = static_cast<W>(acc[j]);
}

inline unsigned blocks(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

Error BinaryCsrmv(cudaStream_t stream, ej::ffi::ScratchAllocator scratch, AnyBuffer data, AnyBuffer indices,
                  AnyBuffer indptr, AnyBuffer spikes, Result<AnyBuffer> out, int64_t m, int64_t n, bool transpose) {
  if (indptr.element_count() != static_cast<size_t>(m + 1) || indptr.element_type() != indices.element_type())
    return Error::InvalidArgument("binary_csrmv (cuda): indptr must have m + 1 entries of the indices' dtype");
  const int64_t nnz = static_cast<int64_t>(indices.element_count());
  const bool homo = data.element_count() == 1;
  Error status = ej::dispatch(data, indices, spikes, [&](auto wt, auto it, auto st) {
    using W = typename decltype(wt)::type;
    using I = typename decltype(it)::type;
    using S = typename decltype(st)::type;
    using A = typename ej::Acc<W>::type;
    const W* w = static_cast<const W*>(data.untyped_data());
    const I* idx = static_cast<const I*>(indices.untyped_data());
    const I* ptr = static_cast<const I*>(indptr.untyped_data());
    const S* s = static_cast<const S*>(spikes.untyped_data());
    W* y = static_cast<W*>(out->untyped_data());
    if (!transpose) {
      if (m > 0) gather<<<blocks(m), kThreads, 0, stream>>>(w, homo, idx, ptr, s, y, m, n, nnz);
      return Error::Success();
    }
    if (n == 0) return Error::Success();
    auto buffer = scratch.Allocate(sizeof(A) * static_cast<size_t>(n), alignof(A));
    if (!buffer.has_value()) return Error(ej::ffi::ErrorCode::kResourceExhausted, "binary_csrmv (cuda): no scratch");
    A* acc = static_cast<A*>(*buffer);
    cudaMemsetAsync(acc, 0, sizeof(A) * static_cast<size_t>(n), stream);
    if (m > 0) scatter<<<blocks(m), kThreads, 0, stream>>>(w, homo, idx, ptr, s, acc, m, n, nnz);
    cast_out<<<blocks(n), kThreads, 0, stream>>>(acc, y, n);
    return Error::Success();
  });
  if (status.failure()) return status;
  const cudaError_t launched = cudaGetLastError();
  return launched == cudaSuccess ? Error::Success() : Error::Internal(cudaGetErrorString(launched));
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(eventjax_binary_csrmv, BinaryCsrmv,
                              ej::ffi::Ffi::Bind()
                                  .Ctx<ej::ffi::PlatformStream<cudaStream_t>>()
                                  .Ctx<ej::ffi::ScratchAllocator>()
                                  .Arg<AnyBuffer>()
                                  .Arg<AnyBuffer>()
                                  .Arg<AnyBuffer>()
                                  .Arg<AnyBuffer>()
                                  .Ret<AnyBuffer>()
                                  .Attr<int64_t>("m")
                                  .Attr<int64_t>("n")
                                  .Attr<bool>("transpose"));
