// binary_fcnmv for the cuda backend: one thread per row of A, on XLA's stream.
// transpose=True adds into a float32/64 scratch buffer (float16 sums in float32) that a
// second kernel casts into the output.
#include "event_kernels.h"

namespace {

using ej::ffi::AnyBuffer;
using ej::ffi::Error;
using ej::ffi::Result;

constexpr int kThreads = 256;

template <typename W, typename I, typename S>
__global__ void gather(const W* w, bool homo, const I* idx, const S* s, W* out, int64_t m, int64_t n, int64_t k) {
  using A = typename ej::Acc<W>::type;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= m) return;
  A acc = A(0);
  for (int64_t j = 0; j < k; ++j) {
    const I c = idx[i * k + j];
    if (ej::valid_column(c, n) && ej::is_event(s[c])) acc += static_cast<A>(w[homo ? 0 : i * k + j]);
  }
  out[i] = static_cast<W>(acc);
}

template <typename W, typename I, typename S, typename A>
__global__ void scatter(const W* w, bool homo, const I* idx, const S* s, A* acc, int64_t m, int64_t n, int64_t k) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= m || !ej::is_event(s[i])) return;
  for (int64_t j = 0; j < k; ++j) {
    const I c = idx[i * k + j];
    if (ej::valid_column(c, n)) atomicAdd(acc + c, static_cast<A>(w[homo ? 0 : i * k + j]));
  }
}

template <typename W, typename A> __global__ void cast_out(const A* acc, W* out, int64_t n) {
  const int64_t j = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (j < n) out[j] = static_cast<W>(acc[j]);
}

inline unsigned blocks(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

Error BinaryFcnmv(cudaStream_t stream, ej::ffi::ScratchAllocator scratch, AnyBuffer weights, AnyBuffer indices,
                  AnyBuffer spikes, Result<AnyBuffer> out, int64_t m, int64_t n, bool transpose) {
  const auto dims = indices.dimensions();
  if (dims.size() != 2 || dims[0] != m) return Error::InvalidArgument("binary_fcnmv (cuda): indices must be (m, k)");
  const int64_t k = dims[1];
  const bool homo = weights.element_count() == 1;
  Error status = ej::dispatch(weights, indices, spikes, [&](auto wt, auto it, auto st) {
    using W = typename decltype(wt)::type;
    using I = typename decltype(it)::type;
    using S = typename decltype(st)::type;
    using A = typename ej::Acc<W>::type;
    const W* w = static_cast<const W*>(weights.untyped_data());
    const I* idx = static_cast<const I*>(indices.untyped_data());
    const S* s = static_cast<const S*>(spikes.untyped_data());
    W* y = static_cast<W*>(out->untyped_data());
    if (!transpose) {
      if (m > 0) gather<<<blocks(m), kThreads, 0, stream>>>(w, homo, idx, s, y, m, n, k);
      return Error::Success();
    }
    if (n == 0) return Error::Success();
    auto buffer = scratch.Allocate(sizeof(A) * static_cast<size_t>(n), alignof(A));
    if (!buffer.has_value()) return Error(ej::ffi::ErrorCode::kResourceExhausted, "binary_fcnmv (cuda): no scratch");
    A* acc = static_cast<A*>(*buffer);
    cudaMemsetAsync(acc, 0, sizeof(A) * static_cast<size_t>(n), stream);
    if (m > 0) scatter<<<blocks(m), kThreads, 0, stream>>>(w, homo, idx, s, acc, m, n, k);
    cast_out<<<blocks(n), kThreads, 0, stream>>>(acc, y, n);
    return Error::Success();
  });
  if (status.failure()) return status;
  const cudaError_t launched = cudaGetLastError();
  return launched == cudaSuccess ? Error::Success() : Error::Internal(cudaGetErrorString(launched));
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(eventjax_binary_fcnmv, BinaryFcnmv,
                              ej::ffi::Ffi::Bind()
                                  .Ctx<ej::ffi::PlatformStream<cudaStream_t>>()
                                  .Ctx<ej::ffi::ScratchAllocator>()
                                  .Arg<AnyBuffer>()
                                  .Arg<AnyBuffer>()
                                  .Arg<AnyBuffer>()
                                  .Ret<AnyBuffer>()
                                  .Attr<int64_t>("m")
                                  .Attr<int64_t>("n")
                                  .Attr<bool>("transpose"));
