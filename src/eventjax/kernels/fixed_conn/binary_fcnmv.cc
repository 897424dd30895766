// binary_fcnmv for the cpp backend: row i of A holds k connections, A[i, indices[i, j]] += weights[i, j].
#include <vector>

#include "event_kernels.h"

namespace {

using ej::ffi::AnyBuffer;
using ej::ffi::Error;
using ej::ffi::Result;

template <typename W, typename I, typename S>
void gather(const W* w, bool homo, const I* idx, const S* s, W* out, int64_t m, int64_t n, int64_t k) {
  using A = typename ej::Acc<W>::type;
  for (int64_t i = 0; i < m; ++i) {
    A acc = A(0);
    for (int64_t j = 0; j < k; ++j) {
      const I c = idx[i * k + j];
      if (ej::valid_column(c, n) && ej::is_event(s[c])) acc += static_cast<A>(w[homo ? 0 : i * k + j]);
    }
    out[i] = static_cast<W>(acc);
  }
}

template <typename W, typename I, typename S>
void scatter(const W* w, bool homo, const I* idx, const S* s, W* out, int64_t m, int64_t n, int64_t k) {
  using A = typename ej::Acc<W>::type;
  std::vector<A> acc(static_cast<size_t>(n), A(0));
  for (int64_t i = 0; i < m; ++i) {
    if (!ej::is_event(s[i])) continue;  // event-driven: only the rows of the events are visited
    for (int64_t j = 0; j < k; ++j) {
      const I c = idx[i * k + j];
      if (ej::valid_column(c, n)) acc[static_cast<size_t>(c)] += static_cast<A>(w[homo ? 0 : i * k + j]);
    }
  }
  for (int64_t j = 0; j < n; ++j) out[j] = static_cast<W>(acc[static_cast<size_t>(j)]);
}

Error BinaryFcnmv(AnyBuffer weights, AnyBuffer indices, AnyBuffer spikes, Result<AnyBuffer> out, int64_t m,
                  int64_t n, bool transpose) {
  const auto dims = indices.dimensions();
  if (dims.size() != 2 || dims[0] != m) return Error::InvalidArgument("binary_fcnmv (cpp): indices must be (m, k)");
  const int64_t k = dims[1];
  const bool homo = weights.element_count() == 1;
  return ej::dispatch(weights, indices, spikes, [&](auto wt, auto it, auto st) {
    using W = typename decltype(wt)::type;
    using I = typename decltype(it)::type;
    using S = typename decltype(st)::type;
    const W* w = static_cast<const W*>(weights.untyped_data());
    const I* idx = static_cast<const I*>(indices.untyped_data());
    const S* s = static_cast<const S*>(spikes.untyped_data());
    W* y = static_cast<W*>(out->untyped_data());
    if (transpose) scatter(w, homo, idx, s, y, m, n, k);
    else gather(w, homo, idx, s, y, m, n, k);
    return Error::Success();
  });
}

}  // namespace

XLA_FFI_DEFINE_HANDLER_SYMBOL(eventjax_binary_fcnmv, BinaryFcnmv,
                              ej::ffi::Ffi::Bind()
                                  .Arg<AnyBuffer>()
                                  .Arg<AnyBuffer>()
                                  .Arg<AnyBuffer>()
                                  .Ret<AnyBuffer>()
                                  .Attr<int64_t>("m")
                                  .Attr<int64_t>("n")
                                  .Attr<bool>("transpose"));
