// The CSR products for the cuda backend: csrmv, csrmm, binary_csrmv, binary_csrmm, on XLA's stream.
// One thread per row of A. transpose=False: thread i gathers row i. transpose=True: thread i adds
// row i's terms with atomics into a float32/64 scratch buffer (float16 sums in float32), which a
// second kernel casts into the output; in binary products a row without an event returns at once.
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

template <bool Binary, typename W, typename I, typename X>
__global__ void gather(const W* w, bool homo, const I* idx, const I* ptr, const X* x, W* out, int64_t m, int64_t n,
                       int64_t k, int64_t nnz) {
  using A = typename ej::Acc<W>::type;
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= m) return;
  const int64_t lo = bound(ptr[i], nnz), hi = bound(ptr[i + 1], nnz);
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
__global__ void scatter(const W* w, bool homo, const I* idx, const I* ptr, const X* x, A* acc, int64_t m, int64_t n,
                        int64_t k, int64_t nnz) {
  const int64_t i = blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x;
  if (i >= m) return;
  const X* xi = x + i * k;
  if (Binary) {
    bool any = false;
    for (int64_t j = 0; j < k && !any; ++j) any = ej::is_event(xi[j]);
    if (!any) return;
  }
  for (int64_t e = bound(ptr[i], nnz), hi = bound(ptr[i + 1], nnz); e < hi; ++e) {
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

Error CsrProduct(cudaStream_t stream, ej::ffi::ScratchAllocator scratch, AnyBuffer data, AnyBuffer indices,
                 AnyBuffer indptr, AnyBuffer x, Result<AnyBuffer> out, int64_t m, int64_t n, bool transpose,
                 bool binary) {
  if (indptr.element_count() != static_cast<size_t>(m + 1) || indptr.element_type() != indices.element_type())
    return Error::InvalidArgument("CSR product (cuda): indptr must have m + 1 entries of the indices' dtype");
  const auto dims = x.dimensions();
  const int64_t k = dims.size() == 2 ? dims[1] : 1;
  const int64_t nnz = static_cast<int64_t>(indices.element_count());
  const bool homo = data.element_count() == 1;
  Error status = ej::dispatch(data, indices, x, [&](auto wt, auto it, auto xt) {
    using W = typename decltype(wt)::type;
    using I = typename decltype(it)::type;
    using X = typename decltype(xt)::type;
    using A = typename ej::Acc<W>::type;
    const W* w = static_cast<const W*>(data.untyped_data());
    const I* idx = static_cast<const I*>(indices.untyped_data());
    const I* ptr = static_cast<const I*>(indptr.untyped_data());
    const X* xs = static_cast<const X*>(x.untyped_data());
    W* y = static_cast<W*>(out->untyped_data());
    if (!transpose) {
      if (m > 0 && binary) gather<true><<<blocks(m), kThreads, 0, stream>>>(w, homo, idx, ptr, xs, y, m, n, k, nnz);
      if (m > 0 && !binary) gather<false><<<blocks(m), kThreads, 0, stream>>>(w, homo, idx, ptr, xs, y, m, n, k, nnz);
      return Error::Success();
    }
    const int64_t size = n * k;
    if (size == 0) return Error::Success();
    auto buffer = scratch.Allocate(sizeof(A) * static_cast<size_t>(size), alignof(A));
    if (!buffer.has_value()) return Error(ej::ffi::ErrorCode::kResourceExhausted, "CSR product (cuda): no scratch");
    A* acc = static_cast<A*>(*buffer);
    cudaMemsetAsync(acc, 0, sizeof(A) * static_cast<size_t>(size), stream);
    if (m > 0 && binary) scatter<true><<<blocks(m), kThreads, 0, stream>>>(w, homo, idx, ptr, xs, acc, m, n, k, nnz);
    if (m > 0 && !binary) scatter<false><<<blocks(m), kThreads, 0, stream>>>(w, homo, idx, ptr, xs, acc, m, n, k, nnz);
    cast_out<<<blocks(size), kThreads, 0, stream>>>(acc, y, size);
    return Error::Success();
  });
  if (status.failure()) return status;
  const cudaError_t launched = cudaGetLastError();
  return launched == cudaSuccess ? Error::Success() : Error::Internal(cudaGetErrorString(launched));
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(eventjax_csr_product, CsrProduct,
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
                                  .Attr<bool>("transpose")
                                  .Attr<bool>("binary"));
