// Shared by the cpp (.cc) and cuda (.cu) kernels of the standard event products.
//
// The handlers take every operand as an ffi::AnyBuffer and dispatch on its
// dtype at run time. A build compiles the dtypes named by EJ_WEIGHT, EJ_INDEX
// and EJ_OPERAND (XLA FFI type names: F32, S32, PRED, ...), which the bridge
// defines from each call's operands: every combination a program uses is a
// small library of its own, built in seconds on first use and cached on disk,
// where all 72 combinations in one library took the compiler over a minute.
// Left undefined, a macro keeps every dtype of its kind. Each source serves
// the binary and the float product, with x a vector or a row-major matrix of
// k columns (mv and mm). The semantics are those of the pure-JAX reference
// kernels: an event is an entry that is true or > 0; a connection whose index lies outside [0, n) is dropped; weights of
// event connections are selected, never multiplied by an indicator (a NaN
// weight without an event adds nothing); float16 sums run in float32.
#pragma once

#include <algorithm>
#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include "xla/ffi/api/ffi.h"

#if defined(__CUDACC__)
#include <cuda_fp16.h>
#define EJ_HD __host__ __device__
#else
#define EJ_HD
#endif

namespace ej {

namespace ffi = xla::ffi;

#if defined(__CUDACC__)
using half_t = __half;
#else
using half_t = _Float16;
#endif

template <typename T> struct Tag { using type = T; };

// The type sums run in: float16 accumulates in float32.
template <typename W> struct Acc { using type = W; };
template <> struct Acc<half_t> { using type = float; };

// Compared in the operand's own type: a float64 event of 1e-300 (or an int64 past 2**24) must not be
// rounded before the test. float16 widens to float exactly.
template <typename S> EJ_HD inline bool is_event(S s) { return s > S(0); }
template <> EJ_HD inline bool is_event<half_t>(half_t s) { return static_cast<float>(s) > 0.0f; }
template <> EJ_HD inline bool is_event<bool>(bool s) { return s; }

// One connection's term: its weight if x is an event (binary products; a select, so a NaN
// weight without an event adds nothing), else the IEEE product w * x.
template <bool Binary, typename A, typename X> EJ_HD inline A term(A w, X x) {
  if constexpr (Binary) {
    return is_event(x) ? w : A(0);
  } else {
    return w * static_cast<A>(x);
  }
}

// Whether a stored column index names a column of [0, n) (negative indices are not wrapped).
template <typename I> EJ_HD inline bool valid_column(I c, int64_t n) {
  return static_cast<uint64_t>(static_cast<int64_t>(c)) < static_cast<uint64_t>(n);
}

#if !defined(__CUDACC__)
// The event count below carries an `omp simd` reduction: built with -fopenmp-simd it vectorises, with no
// OpenMP runtime and no threads.

// A column index read unsigned, or n when it lies outside [0, n) (so a negative one is dropped too).
template <typename I> inline uint64_t clamp_column(I c, int64_t n) {
  const uint64_t u = static_cast<uint64_t>(static_cast<int64_t>(c));
  return u < static_cast<uint64_t>(n) ? u : static_cast<uint64_t>(n);
}

// Where a scatter sums: the output itself, zeroed, unless the sums need a wider type (float16 weights sum
// in float32) and so `wide`; store_sums then writes them out. No buffer and no copy in the common case.
template <typename A, typename W> A* scatter_sums(W* out, int64_t size, std::vector<A>* wide) {
  if constexpr (std::is_same_v<A, W>) {
    std::fill(out, out + size, W(0));
    return out;
  } else {
    wide->assign(static_cast<size_t>(size), A(0));
    return wide->data();
  }
}

template <typename A, typename W> void store_sums(const A* acc, W* out, int64_t size) {
  if constexpr (!std::is_same_v<A, W>) {
    for (int64_t j = 0; j < size; ++j) out[j] = static_cast<W>(acc[j]);
  }
}

// One byte per entry of the vector x: 1 for an event; one more, 0, that every column outside [0, n) reads.
template <typename X> std::vector<uint8_t> event_flags(const X* x, int64_t n) {
  std::vector<uint8_t> flags(static_cast<size_t>(n) + 1, 0);
  for (int64_t j = 0; j < n; ++j) flags[j] = is_event(x[j]) ? 1 : 0;
  return flags;
}

// The sum of the weights of the entries [lo, hi) whose column holds an event. A shared weight is
// multiplied by the count (no events add nothing, not 0 * NaN), as the numba kernels do.
template <typename A, typename W, typename I>
inline A binary_row_sum(const W* w, bool homo, const I* idx, int64_t lo, int64_t hi, const uint8_t* flags,
                        int64_t n) {
  if (homo) {
    int64_t count = 0;
#pragma omp simd reduction(+ : count)
    for (int64_t e = lo; e < hi; ++e) count += flags[clamp_column(idx[e], n)];
    return count == 0 ? A(0) : static_cast<A>(w[0]) * static_cast<A>(count);
  }
  A s[4] = {A(0), A(0), A(0), A(0)};  // four running sums: the adds do not wait on one another
  int64_t e = lo;
  for (; e + 4 <= hi; e += 4)
    for (int q = 0; q < 4; ++q) s[q] += flags[clamp_column(idx[e + q], n)] ? static_cast<A>(w[e + q]) : A(0);
  for (; e < hi; ++e) s[0] += flags[clamp_column(idx[e], n)] ? static_cast<A>(w[e]) : A(0);
  return (s[0] + s[1]) + (s[2] + s[3]);
}

// The sum of w * x[column] over the entries [lo, hi) whose column lies in [0, n) (n > 0), in four running
// sums (reassociated, as numba's fastmath={'reassoc'} kernels are; no vector gathers, which cost more
// than they save on CPUs that microcode them).
template <typename A, typename W, typename I, typename X>
inline A float_row_sum(const W* w, bool homo, const I* idx, int64_t lo, int64_t hi, const X* x, int64_t n) {
  const uint64_t un = static_cast<uint64_t>(n);
  A s[4] = {A(0), A(0), A(0), A(0)};
  auto term = [&](int64_t e) {
    const uint64_t c = static_cast<uint64_t>(static_cast<int64_t>(idx[e]));
    const A t = static_cast<A>(w[homo ? 0 : e]) * static_cast<A>(x[c < un ? c : 0]);
    return c < un ? t : A(0);
  };
  int64_t e = lo;
  for (; e + 4 <= hi; e += 4)
    for (int q = 0; q < 4; ++q) s[q] += term(e + q);
  for (; e < hi; ++e) s[0] += term(e);
  return (s[0] + s[1]) + (s[2] + s[3]);
}
#endif

// The dtype this build compiles for each kind of operand (see the top of this file); INVALID: every dtype.
#if defined(EJ_WEIGHT)
constexpr ffi::DataType kWeightOnly = ffi::DataType::EJ_WEIGHT;
#else
constexpr ffi::DataType kWeightOnly = ffi::DataType::INVALID;
#endif
#if defined(EJ_INDEX)
constexpr ffi::DataType kIndexOnly = ffi::DataType::EJ_INDEX;
#else
constexpr ffi::DataType kIndexOnly = ffi::DataType::INVALID;
#endif
#if defined(EJ_OPERAND)
constexpr ffi::DataType kOperandOnly = ffi::DataType::EJ_OPERAND;
#else
constexpr ffi::DataType kOperandOnly = ffi::DataType::INVALID;
#endif

// Whether a build restricted to dtype Only (INVALID: none) compiles dtype D.
template <ffi::DataType Only, ffi::DataType D>
constexpr bool kBuilt = Only == ffi::DataType::INVALID || Only == D;

// f(Tag<T>) where this build compiles T; else an error (the bridge never calls a library with other dtypes).
template <bool Built, typename T, typename F> ffi::Error when_built(F&& f) {
  if constexpr (Built) {
    return f(Tag<T>{});
  } else {
    return ffi::Error::Internal("eventjax native kernel: this library was built for other dtypes");
  }
}

// One dtype a dispatch may meet: the FFI dtype D and its C++ type T.
template <ffi::DataType D, typename T> struct Kind {
  static constexpr ffi::DataType dtype = D;
  using type = T;
};

// f(Tag<T>) for the Kind whose dtype is t (see when_built for a build restricted to Only), else the error
// `expected`: one compare per Kind, as a switch would make.
template <ffi::DataType Only, typename... Kinds, typename F>
ffi::Error with_kind(ffi::DataType t, const char* expected, F&& f) {
  ffi::Error result;
  const bool found = ((t == Kinds::dtype && (result = when_built<kBuilt<Only, Kinds::dtype>, typename Kinds::type>(f),
                                             true)) || ...);
  return found ? result : ffi::Error::InvalidArgument(expected);
}

template <typename F> ffi::Error with_weight_type(ffi::DataType t, F&& f) {
  using D = ffi::DataType;
  return with_kind<kWeightOnly, Kind<D::F16, half_t>, Kind<D::F32, float>, Kind<D::F64, double>>(
      t, "eventjax native kernel: weights must be float16, float32 or float64", f);
}

template <typename F> ffi::Error with_index_type(ffi::DataType t, F&& f) {
  using D = ffi::DataType;
  return with_kind<kIndexOnly, Kind<D::S32, int32_t>, Kind<D::S64, int64_t>>(
      t, "eventjax native kernel: indices must be int32 or int64", f);
}

template <typename F> ffi::Error with_event_type(ffi::DataType t, F&& f) {
  using D = ffi::DataType;
  return with_kind<kOperandOnly, Kind<D::PRED, bool>, Kind<D::S8, int8_t>, Kind<D::S16, int16_t>,
                   Kind<D::S32, int32_t>, Kind<D::S64, int64_t>, Kind<D::U8, uint8_t>, Kind<D::U16, uint16_t>,
                   Kind<D::U32, uint32_t>, Kind<D::U64, uint64_t>, Kind<D::F16, half_t>, Kind<D::F32, float>,
                   Kind<D::F64, double>>(t, "eventjax native kernel: events must be bool, an integer or a float", f);
}

// Runs body(Tag<W>, Tag<I>, Tag<S>) for the dtypes of the weights, indices and the operand x
// (events of any dtype for binary products; the weights' dtype for float products).
template <typename F>
ffi::Error dispatch(const ffi::AnyBuffer& w, const ffi::AnyBuffer& idx, const ffi::AnyBuffer& s, F&& body) {
  return with_weight_type(w.element_type(), [&](auto wt) {
    return with_index_type(idx.element_type(), [&](auto it) {
      return with_event_type(s.element_type(), [&](auto st) { return body(wt, it, st); });
    });
  });
}


// The batch columns of the operand x: k for a row-major (rows, k) matrix, 1 for a vector.
inline int64_t batch_columns(const ffi::AnyBuffer& x) {
  const auto dims = x.dimensions();
  return dims.size() == 2 ? dims[1] : 1;
}

// body(w, idx, x, out): the operands as typed pointers (const W*, const I*, const X*, W*) for the dtypes
// dispatch picks.
template <typename F>
ffi::Error with_pointers(const ffi::AnyBuffer& w, const ffi::AnyBuffer& idx, const ffi::AnyBuffer& x, void* out,
                         F&& body) {
  return dispatch(w, idx, x, [&](auto wt, auto it, auto xt) {
    using W = typename decltype(wt)::type;
    using I = typename decltype(it)::type;
    using X = typename decltype(xt)::type;
    return body(static_cast<const W*>(w.untyped_data()), static_cast<const I*>(idx.untyped_data()),
                static_cast<const X*>(x.untyped_data()), static_cast<W*>(out));
  });
}

// f(std::true_type) or f(std::false_type): the binary flag as a template argument (decltype(b)::value).
template <typename F> decltype(auto) with_binary(bool binary, F&& f) {
  return binary ? f(std::true_type{}) : f(std::false_type{});
}

// The attributes every product handler binds after its buffers (a binding's Attr takes it as an rvalue).
template <typename Binding> auto product_attrs(Binding binding) {
  return std::move(binding)
      .template Attr<int64_t>("m")
      .template Attr<int64_t>("n")
      .template Attr<bool>("transpose")
      .template Attr<bool>("binary");
}

#if defined(__CUDACC__)
constexpr int kThreads = 256;

inline unsigned blocks(int64_t n) { return static_cast<unsigned>((n + kThreads - 1) / kThreads); }

// This thread's index in a one-dimensional launch (one thread per row, or per entry).
__device__ inline int64_t thread_index() { return blockIdx.x * static_cast<int64_t>(blockDim.x) + threadIdx.x; }

// Row i of a CUDA gather: out[i, :] = the terms of its entries [lo, hi) against x, a row-major (n, k) matrix.
template <bool Binary, typename W, typename I, typename X>
__device__ inline void gather_row(const W* w, bool homo, const I* idx, const X* x, W* out, int64_t i, int64_t lo,
                                  int64_t hi, int64_t n, int64_t k) {
  using A = typename Acc<W>::type;
  for (int64_t j = 0; j < k; ++j) {
    A acc = A(0);
    for (int64_t e = lo; e < hi; ++e) {
      const I c = idx[e];
      if (valid_column(c, n)) acc += term<Binary>(static_cast<A>(w[homo ? 0 : e]), x[c * k + j]);
    }
    out[i * k + j] = static_cast<W>(acc);
  }
}

// Row i of a CUDA scatter: its entries [lo, hi) add their terms against x[i, :] atomically into acc, (n, k);
// a binary row without an event returns at once.
template <bool Binary, typename W, typename I, typename X, typename A>
__device__ inline void scatter_row(const W* w, bool homo, const I* idx, const X* x, A* acc, int64_t i, int64_t lo,
                                   int64_t hi, int64_t n, int64_t k) {
  const X* xi = x + i * k;
  if (Binary) {
    bool any = false;
    for (int64_t j = 0; j < k && !any; ++j) any = is_event(xi[j]);
    if (!any) return;
  }
  for (int64_t e = lo; e < hi; ++e) {
    const I c = idx[e];
    if (!valid_column(c, n)) continue;
    const A we = static_cast<A>(w[homo ? 0 : e]);
    for (int64_t j = 0; j < k; ++j) atomicAdd(acc + c * k + j, term<Binary>(we, xi[j]));
  }
}

// What a CUDA product handler binds before its buffers: its stream and the scratch allocator.
inline auto cuda_binding() {
  return ffi::Ffi::Bind().Ctx<ffi::PlatformStream<cudaStream_t>>().Ctx<ffi::ScratchAllocator>();
}

template <typename W, typename A> __global__ void cast_out(const A* acc, W* out, int64_t size) {
  const int64_t j = thread_index();
  if (j < size) out[j] = static_cast<W>(acc[j]);
}

// The launches of a CUDA product into out (size entries): gather(b, out) writes out itself; scatter(b, acc)
// sums atomically into a zeroed scratch buffer of the accumulation type, cast into out afterwards. Both
// launch one thread per row of the m rows; b carries the binary flag (see with_binary).
template <typename W, typename G, typename S>
ffi::Error launch_product(cudaStream_t stream, ffi::ScratchAllocator& scratch, W* out, int64_t m, int64_t size,
                          bool transpose, bool binary, const char* no_scratch, G&& gather, S&& scatter) {
  using A = typename Acc<W>::type;
  if (!transpose) {
    if (m > 0) with_binary(binary, [&](auto b) { gather(b, out); });
    return ffi::Error::Success();
  }
  if (size == 0) return ffi::Error::Success();
  auto buffer = scratch.Allocate(sizeof(A) * static_cast<size_t>(size), alignof(A));
  if (!buffer.has_value()) return ffi::Error(ffi::ErrorCode::kResourceExhausted, no_scratch);
  A* acc = static_cast<A*>(*buffer);
  cudaMemsetAsync(acc, 0, sizeof(A) * static_cast<size_t>(size), stream);
  if (m > 0) with_binary(binary, [&](auto b) { scatter(b, acc); });
  cast_out<<<blocks(size), kThreads, 0, stream>>>(acc, out, size);
  return ffi::Error::Success();
}

// status, or the error of the last launch when status is a success.
inline ffi::Error launch_status(ffi::Error status) {
  if (status.failure()) return status;
  const cudaError_t launched = cudaGetLastError();
  return launched == cudaSuccess ? ffi::Error::Success() : ffi::Error::Internal(cudaGetErrorString(launched));
}
#endif

}  // namespace ej
