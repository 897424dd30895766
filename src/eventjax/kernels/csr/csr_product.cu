// The CSR products for the cuda backend: csrmv, csrmm, binary_csrmv, binary_csrmm, on XLA's stream.
// One thread per row of A. transpose=False: thread i gathers row i. transpose=True: thread i adds
// row i's terms with atomics into a float32/64 scratch buffer (float16 sums in float32), which a
// second kernel casts into the output; in binary products a row without an event returns at once.
#include "event_kernels.h"

namespace {

using ej::ffi::AnyBuffer;
using ej::ffi::Error;
using ej::ffi::Result;

template <typename I> __device__ inline int64_t bound(I v, int64_t nnz) {
  const int64_t x = static_cast<int64_t>(v);
  return x < 0 ? 0 : (x > nnz ? nnz : x);
}

template <bool Binary, typename W, typename I, typename X>
__global__ void gather(const W* w, bool homo, const I* idx, const I* ptr, const X* x, W* out, int64_t m, int64_t n,
                       int64_t k, int64_t nnz) {
  const int64_t i = ej::thread_index();
  if (i < m) ej::gather_row<Binary>(w, homo, idx, x, out, i, bound(ptr[i], nnz), bound(ptr[i + 1], nnz), n, k);
}

template <bool Binary, typename W, typename I, typename X, typename A>
__global__ void scatter(const W* w, bool homo, const I* idx, const I* ptr, const X* x, A* acc, int64_t m, int64_t n,
                        int64_t k, int64_t nnz) {
  const int64_t i = ej::thread_index();
  if (i < m) ej::scatter_row<Binary>(w, homo, idx, x, acc, i, bound(ptr[i], nnz), bound(ptr[i + 1], nnz), n, k);
}

Error CsrProduct(cudaStream_t stream, ej::ffi::ScratchAllocator scratch, AnyBuffer data, AnyBuffer indices,
                 AnyBuffer indptr, AnyBuffer x, Result<AnyBuffer> out, int64_t m, int64_t n, bool transpose,
                 bool binary) {
  if (indptr.element_count() != static_cast<size_t>(m + 1) || indptr.element_type() != indices.element_type())
    return Error::InvalidArgument("CSR product (cuda): indptr must have m + 1 entries of the indices' dtype");
  const int64_t k = ej::batch_columns(x);
  const int64_t nnz = static_cast<int64_t>(indices.element_count());
  const bool homo = data.element_count() == 1;
  return ej::launch_status(
      ej::with_pointers(data, indices, x, out->untyped_data(), [&](auto w, auto idx, auto xs, auto y) {
        const auto ptr = static_cast<decltype(idx)>(indptr.untyped_data());
        const unsigned grid = ej::blocks(m);
        return ej::launch_product(
            stream, scratch, y, m, n * k, transpose, binary, "CSR product (cuda): no scratch",
            [&](auto b, auto* o) {
              gather<decltype(b)::value><<<grid, ej::kThreads, 0, stream>>>(w, homo, idx, ptr, xs, o, m, n, k, nnz);
            },
            [&](auto b, auto* acc) {
              scatter<decltype(b)::value><<<grid, ej::kThreads, 0, stream>>>(w, homo, idx, ptr, xs, acc, m, n, k, nnz);
            });
      }));
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(eventjax_csr_product, CsrProduct,
                              ej::product_attrs(ej::cuda_binding()
                                                    .Arg<AnyBuffer>()  // data
                                                    .Arg<AnyBuffer>()  // indices
                                                    .Arg<AnyBuffer>()  // indptr
                                                    .Arg<AnyBuffer>()  // x
                                                    .Ret<AnyBuffer>()));
