// binary_csrmv for the cpp backend: y = A @ events (gather) or events @ A (scatter over event rows).
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

template <typename W, typename I, typename S>
void gather(const W* w, bool homo, const I* idx, const I* ptr, const S* s, W* out, int64_t m, int64_t n,
            int64_t nnz) {
  using A = typename ej::Acc<W>::type;
  for (int64_t i = 0; i < m; ++i) {
    const int64_t lo = bound(ptr[i], nnz), hi = bound(ptr[i + 1], nnz);
    A acc = A(0);
    for (int64_t k = lo; k < hi; ++k) {
      const I c = idx[k];
      if (ej::valid_column(c, n) && ej::is_event(s[c])) acc += static_cast<A>(w[homo ? 0 : k]);
    }
    out[i] = static_cast<W>(acc);
  }
}

template <typename W, typename I, typename S>
void scatter(const W* w, bool homo, const I* idx, const I* ptr, const S* s, W* out, int64_t m, int64_t n,
             int64_t nnz) {
  using A = typename ej::Acc<W>::type;
  std::vector<A> acc(static_cast<size_t>(n), A(0));
  for (int64_t i = 0; i < m; ++i) {
    if (!ej::is_event(s[i])) continue;  // event-driven: only the rows of the events are visited
    const int64_t lo = bound(ptr[i], nnz), hi = bound(ptr[i + 1], nnz);
    for (int64_t k = lo; k < hi; ++k) {
      const I c = idx[k];
      if (ej::valid_column(c, n)) acc[static_cast<size_t>(c)] += static_cast<A>(w[homo ? 0 : k]);
    }
  }
  for (int64_t j = 0; j < n; ++j) out[j] = static_cast<W>(acc[static_cast<size_t>(j)]);
}

Error BinaryCsrmv(AnyBuffer data, AnyBuffer indices, AnyBuffer indptr, AnyBuffer spikes, Result<AnyBuffer> out,
                  int64_t m, int64_t n, bool transpose) {
  if (indptr.element_count() != static_cast<size_t>(m + 1) || indptr.element_type() != indices.element_type())
    return Error::InvalidArgument("binary_csrmv (cpp): indptr must have m + 1 entries of the indices' dtype");
  const int64_t nnz = static_cast<int64_t>(indices.element_count());
  const bool homo = data.element_count() == 1;
  return ej::dispatch(data, indices, spikes, [&](auto wt, auto it, auto st) {
    using W = typename decltype(wt)::type;
    using I = typename decltype(it)::type;
    using S = typename decltype(st)::type;
    const W* w = static_cast<const W*>(data.untyped_data());
    const I* idx = static_cast<const I*>(indices.untyped_data());
    const I* ptr = static_cast<const I*>(indptr.untyped_data());
    const S* s = static_cast<const S*>(spikes.untyped_data());
    W* y = static_cast<W*>(out->untyped_data());
    if (transpose) scatter(w, homo, idx, ptr, s, y, m, n, nnz);
    else gather(w, homo, idx, ptr, s, y, m, n, nnz);
    return Error::Success();
  });
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(eventjax_binary_csrmv, BinaryCsrmv,
                              ej::ffi::Ffi::Bind()
                                  .Arg<AnyBuffer>()
                                  .Arg<AnyBuffer>()
                                  .Arg<AnyBuffer>()
                                  .Arg<AnyBuffer>()
                                  .Ret<AnyBuffer>()
                                  .Attr<int64_t>("m")
                                  .Attr<int64_t>("n")
                                  .Attr<bool>("transpose"));
