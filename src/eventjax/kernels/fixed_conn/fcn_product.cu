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
