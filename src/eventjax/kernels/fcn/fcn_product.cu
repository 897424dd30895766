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

// Row i owns the kc entries [i * kc, (i + 1) * kc) of indices (and of the weights, unless shared).
template <bool Binary, typename W, typename I, typename X>
__global__ void gather(const W* w, bool homo, const I* idx, const X* x, W* out, int64_t m, int64_t n, int64_t k,
                       int64_t kc) {
  const int64_t i = ej::thread_index();
  if (i < m) ej::gather_row<Binary>(w, homo, idx, x, out, i, i * kc, (i + 1) * kc, n, k);
}

template <bool Binary, typename W, typename I, typename X, typename A>
__global__ void scatter(const W* w, bool homo, const I* idx, const X* x, A* acc, int64_t m, int64_t n, int64_t k,
                        int64_t kc) {
  const int64_t i = ej::thread_index();
  if (i < m) ej::scatter_row<Binary>(w, homo, idx, x, acc, i, i * kc, (i + 1) * kc, n, k);
}

Error FcnProduct(cudaStream_t stream, ej::ffi::ScratchAllocator scratch, AnyBuffer data, AnyBuffer indices,
                 AnyBuffer x, Result<AnyBuffer> out, int64_t m, int64_t n, bool transpose, bool binary) {
  const auto idims = indices.dimensions();
  if (idims.size() != 2 || idims[0] != m) return Error::InvalidArgument("FCN product (cuda): indices must be (m, k)");
  const int64_t kc = idims[1];
  const int64_t k = ej::batch_columns(x);
  const bool homo = data.element_count() == 1;
  return ej::launch_status(
      ej::with_pointers(data, indices, x, out->untyped_data(), [&](auto w, auto idx, auto xs, auto y) {
        const unsigned grid = ej::blocks(m);
        return ej::launch_product(
            stream, scratch, y, m, n * k, transpose, binary, "FCN product (cuda): no scratch",
            [&](auto b, auto* o) {
              gather<decltype(b)::value><<<grid, ej::kThreads, 0, stream>>>(w, homo, idx, xs, o, m, n, k, kc);
            },
            [&](auto b, auto* acc) {
              scatter<decltype(b)::value><<<grid, ej::kThreads, 0, stream>>>(w, homo, idx, xs, acc, m, n, k, kc);
            });
      }));
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(eventjax_fcn_product, FcnProduct,
                              ej::product_attrs(ej::cuda_binding()
                                                    .Arg<AnyBuffer>()  // data
                                                    .Arg<AnyBuffer>()  // indices
                                                    .Arg<AnyBuffer>()  // x
                                                    .Ret<AnyBuffer>()));
