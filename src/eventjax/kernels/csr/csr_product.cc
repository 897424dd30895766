// The CSR products for the cpp backend: csrmv, csrmm, binary_csrmv, binary_csrmm.
// y = A @ x (gather, one output row per CSR row) or x @ A (transpose: scatter from the
// rows of x; binary products skip the rows without an event). x is (rows, k), k = 1 for mv.
// indptr is repaired on the fly as the rows are visited in order (cummax(clip(indptr, 0, nnz)),
// what the other backends do in JAX before their kernel), so no XLA op runs before the call.
#include <algorithm>
#include <vector>

#include "event_kernels.h"

namespace {

using ej::ffi::AnyBuffer;
using ej::ffi::Error;
using ej::ffi::Result;

template <typename I> inline int64_t bound(I v, int64_t nnz) {
  return std::min<int64_t>(std::max<int64_t>(static_cast<int64_t>(v), 0), nnz);
}

template <bool Binary, typename W, typename I, typename X>
void gather(const W* w, bool homo, const I* idx, const I* ptr, const X* x, W* out, int64_t m, int64_t n, int64_t k,
            int64_t nnz) {
  using A = typename ej::Acc<W>::type;
  int64_t lo = m > 0 ? bound(ptr[0], nnz) : 0;
  if (k == 1) {  // the vector product: one vectorised row sum per row
    std::vector<uint8_t> flags;
    if constexpr (Binary) flags = ej::event_flags(x, n);
    for (int64_t i = 0; i < m; ++i) {
      const int64_t hi = std::max(lo, bound(ptr[i + 1], nnz));  // the repaired indptr: cummax(clip(indptr))
      A sum;
      if constexpr (Binary) sum = ej::binary_row_sum<A>(w, homo, idx, lo, hi, flags.data(), n);
      else sum = n > 0 ? ej::float_row_sum<A>(w, homo, idx, lo, hi, x, n) : A(0);
      out[i] = static_cast<W>(sum);
      lo = hi;
    }
    return;
  }
  std::vector<A> acc(static_cast<size_t>(k));
  for (int64_t i = 0; i < m; ++i) {
    const int64_t hi = std::max(lo, bound(ptr[i + 1], nnz));  // the repaired indptr: cummax(clip(indptr))
    std::fill(acc.begin(), acc.end(), A(0));
    for (int64_t e = lo; e < hi; ++e) {
      const I c = idx[e];
      if (!ej::valid_column(c, n)) continue;
      const A we = static_cast<A>(w[homo ? 0 : e]);
      const X* xc = x + static_cast<int64_t>(c) * k;
      for (int64_t j = 0; j < k; ++j) acc[j] += ej::term<Binary>(we, xc[j]);
    }
    for (int64_t j = 0; j < k; ++j) out[i * k + j] = static_cast<W>(acc[j]);
    lo = hi;
  }
}

template <bool Binary, typename W, typename I, typename X>
void scatter(const W* w, bool homo, const I* idx, const I* ptr, const X* x, W* out, int64_t m, int64_t n, int64_t k,
             int64_t nnz) {
  using A = typename ej::Acc<W>::type;
  std::vector<A> wide;
  A* acc = ej::scatter_sums(out, n * k, &wide);
  std::vector<int64_t> events;
  int64_t lo = m > 0 ? bound(ptr[0], nnz) : 0;
  for (int64_t i = 0; i < m; ++i, lo = std::max(lo, bound(ptr[i], nnz))) {
    const int64_t hi = std::max(lo, bound(ptr[i + 1], nnz));  // the repaired indptr: cummax(clip(indptr))
    const X* xi = x + i * k;
    if constexpr (Binary) {  // event-driven: only the (row, column) pairs with an event are visited
      if (k == 1) {
        if (!ej::is_event(xi[0])) continue;
        if (homo) {
          const A w0 = static_cast<A>(w[0]);
          for (int64_t e = lo; e < hi; ++e) {
            const uint64_t c = ej::clamp_column(idx[e], n);
            if (c < static_cast<uint64_t>(n)) acc[c] += w0;
          }
        } else {
          for (int64_t e = lo; e < hi; ++e) {
            const uint64_t c = ej::clamp_column(idx[e], n);
            if (c < static_cast<uint64_t>(n)) acc[c] += static_cast<A>(w[e]);
          }
        }
        continue;
      }
      events.clear();
      for (int64_t j = 0; j < k; ++j)
        if (ej::is_event(xi[j])) events.push_back(j);
      if (events.empty()) continue;
      for (int64_t e = lo; e < hi; ++e) {
        const I c = idx[e];
        if (!ej::valid_column(c, n)) continue;
        const A we = static_cast<A>(w[homo ? 0 : e]);
        A* row = acc + static_cast<int64_t>(c) * k;
        for (const int64_t j : events) row[j] += we;
      }
    } else {
      for (int64_t e = lo; e < hi; ++e) {
        const I c = idx[e];
        if (!ej::valid_column(c, n)) continue;
        const A we = static_cast<A>(w[homo ? 0 : e]);
        A* row = acc + static_cast<int64_t>(c) * k;
        for (int64_t j = 0; j < k; ++j) row[j] += ej::term<Binary>(we, xi[j]);
      }
    }
  }
  ej::store_sums(acc, out, n * k);
}

Error CsrProduct(AnyBuffer data, AnyBuffer indices, AnyBuffer indptr, AnyBuffer x, Result<AnyBuffer> out, int64_t m,
                 int64_t n, bool transpose, bool binary) {
  if (indptr.element_count() != static_cast<size_t>(m + 1) || indptr.element_type() != indices.element_type())
    return Error::InvalidArgument("CSR product (cpp): indptr must have m + 1 entries of the indices' dtype");
  const int64_t k = ej::batch_columns(x);
  const int64_t nnz = static_cast<int64_t>(indices.element_count());
  const bool homo = data.element_count() == 1;
  return ej::with_pointers(data, indices, x, out->untyped_data(), [&](auto w, auto idx, auto xs, auto y) {
    const auto ptr = static_cast<decltype(idx)>(indptr.untyped_data());
    ej::with_binary(binary, [&](auto b) {
      if (transpose) scatter<decltype(b)::value>(w, homo, idx, ptr, xs, y, m, n, k, nnz);
      else gather<decltype(b)::value>(w, homo, idx, ptr, xs, y, m, n, k, nnz);
    });
    return Error::Success();
  });
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(eventjax_csr_product, CsrProduct,
                              ej::product_attrs(ej::ffi::Ffi::Bind()
                                                    .Arg<AnyBuffer>()  // data
                                                    .Arg<AnyBuffer>()  // indices
                                                    .Arg<AnyBuffer>()  // indptr
                                                    .Arg<AnyBuffer>()  // x
                                                    .Ret<AnyBuffer>()));
