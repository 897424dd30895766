// The FCN products for the cpp backend: fcnmv, fcnmm, binary_fcnmv, binary_fcnmm.
// Row i of A holds k connections: A[i, indices[i, j]] += weights[i, j]. x is (rows, c), c = 1 for mv.
#include <algorithm>
#include <vector>

#include "event_kernels.h"

namespace {

using ej::ffi::AnyBuffer;
using ej::ffi::Error;
using ej::ffi::Result;

template <bool Binary, typename W, typename I, typename X>
void gather(const W* w, bool homo, const I* idx, const X* x, W* out, int64_t m, int64_t n, int64_t k, int64_t cols) {
  using A = typename ej::Acc<W>::type;
  if (cols == 1) {  // the vector product: one vectorised row sum per row
    std::vector<uint8_t> flags;
    if constexpr (Binary) flags = ej::event_flags(x, n);
    for (int64_t i = 0; i < m; ++i) {
      A sum;
      if constexpr (Binary) sum = ej::binary_row_sum<A>(w, homo, idx, i * k, i * k + k, flags.data(), n);
      else sum = n > 0 ? ej::float_row_sum<A>(w, homo, idx, i * k, i * k + k, x, n) : A(0);
      out[i] = static_cast<W>(sum);
    }
    return;
  }
  std::vector<A> acc(static_cast<size_t>(cols));
  for (int64_t i = 0; i < m; ++i) {
    std::fill(acc.begin(), acc.end(), A(0));
    for (int64_t j = 0; j < k; ++j) {
      const I c = idx[i * k + j];
      if (!ej::valid_column(c, n)) continue;
      const A we = static_cast<A>(w[homo ? 0 : i * k + j]);
      const X* xc = x + static_cast<int64_t>(c) * cols;
      for (int64_t q = 0; q < cols; ++q) acc[q] += ej::term<Binary>(we, xc[q]);
    }
    for (int64_t q = 0; q < cols; ++q) out[i * cols + q] = static_cast<W>(acc[q]);
  }
}

template <bool Binary, typename W, typename I, typename X>
void scatter(const W* w, bool homo, const I* idx, const X* x, W* out, int64_t m, int64_t n, int64_t k, int64_t cols) {
  using A = typename ej::Acc<W>::type;
  std::vector<A> wide;
  A* acc = ej::scatter_sums(out, n * cols, &wide);
  std::vector<int64_t> events;
  for (int64_t i = 0; i < m; ++i) {
    const X* xi = x + i * cols;
    if constexpr (Binary) {  // event-driven: only the (row, column) pairs with an event are visited
      if (cols == 1) {
        if (!ej::is_event(xi[0])) continue;
        const int64_t lo = i * k;
        if (homo) {
          const A w0 = static_cast<A>(w[0]);
          for (int64_t e = lo; e < lo + k; ++e) {
            const uint64_t c = ej::clamp_column(idx[e], n);
            if (c < static_cast<uint64_t>(n)) acc[c] += w0;
          }
        } else {
          for (int64_t e = lo; e < lo + k; ++e) {
            const uint64_t c = ej::clamp_column(idx[e], n);
            if (c < static_cast<uint64_t>(n)) acc[c] += static_cast<A>(w[e]);
          }
        }
        continue;
      }
      events.clear();
      for (int64_t q = 0; q < cols; ++q)
        if (ej::is_event(xi[q])) events.push_back(q);
      if (events.empty()) continue;
      for (int64_t j = 0; j < k; ++j) {
        const I c = idx[i * k + j];
        if (!ej::valid_column(c, n)) continue;
        const A we = static_cast<A>(w[homo ? 0 : i * k + j]);
        A* row = acc + static_cast<int64_t>(c) * cols;
        for (const int64_t q : events) row[q] += we;
      }
    } else {
      for (int64_t j = 0; j < k; ++j) {
        const I c = idx[i * k + j];
        if (!ej::valid_column(c, n)) continue;
        const A we = static_cast<A>(w[homo ? 0 : i * k + j]);
        A* row = acc + static_cast<int64_t>(c) * cols;
        for (int64_t q = 0; q < cols; ++q) row[q] += ej::term<Binary>(we, xi[q]);
      }
    }
  }
  ej::store_sums(acc, out, n * cols);
}

Error FcnProduct(AnyBuffer weights, AnyBuffer indices, AnyBuffer x, Result<AnyBuffer> out, int64_t m, int64_t n,
                 bool transpose, bool binary) {
  const auto dims = indices.dimensions();
  if (dims.size() != 2 || dims[0] != m) return Error::InvalidArgument("FCN product (cpp): indices must be (m, k)");
  const int64_t k = dims[1];
  const int64_t cols = ej::batch_columns(x);
  const bool homo = weights.element_count() == 1;
  return ej::with_pointers(weights, indices, x, out->untyped_data(), [&](auto w, auto idx, auto xs, auto y) {
    ej::with_binary(binary, [&](auto b) {
      if (transpose) scatter<decltype(b)::value>(w, homo, idx, xs, y, m, n, k, cols);
      else gather<decltype(b)::value>(w, homo, idx, xs, y, m, n, k, cols);
    });
    return Error::Success();
  });
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(eventjax_fcn_product, FcnProduct,
                              ej::product_attrs(ej::ffi::Ffi::Bind()
                                                    .Arg<AnyBuffer>()  // weights
                                                    .Arg<AnyBuffer>()  // indices
                                                    .Arg<AnyBuffer>()  // x
                                                    .Ret<AnyBuffer>()));
