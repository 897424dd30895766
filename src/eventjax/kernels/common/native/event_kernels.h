// Shared by the cpp (.cc) and cuda (.cu) kernels of the standard event products.
//
// The handlers take every operand as an ffi::AnyBuffer and dispatch on its
// dtype at run time, so one library serves every dtype combination (one
// build, cached on disk, instead of one per combination). Each source serves
// the binary and the float product, with x a vector or a row-major matrix of
// k columns (mv and mm). The semantics are those of the pure-JAX reference
// kernels: an event is an entry that is true or > 0; a connection whose index lies outside [0, n) is dropped; weights of
// event connections are selected, never multiplied by an indicator (a NaN
// weight without an event adds nothing); float16 sums run in float32.
#pragma once

#include <cstdint>

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

template <typename S> EJ_HD inline bool is_event(S s) { return static_cast<float>(s) > 0.0f; }
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

template <typename F> ffi::Error with_weight_type(ffi::DataType t, F&& f) {
  switch (t) {
    case ffi::DataType::F16: return f(Tag<half_t>{});
    case ffi::DataType::F32: return f(Tag<float>{});
    case ffi::DataType::F64: return f(Tag<double>{});
    default: return ffi::Error::InvalidArgument("eventjax native kernel: weights must be float16, float32 or float64");
  }
}

template <typename F> ffi::Error with_index_type(ffi::DataType t, F&& f) {
  switch (t) {
    case ffi::DataType::S32: return f(Tag<int32_t>{});
    case ffi::DataType::S64: return f(Tag<int64_t>{});
    default: return ffi::Error::InvalidArgument("eventjax native kernel: indices must be int32 or int64");
  }
}

template <typename F> ffi::Error with_event_type(ffi::DataType t, F&& f) {
  switch (t) {
    case ffi::DataType::PRED: return f(Tag<bool>{});
    case ffi::DataType::S8: return f(Tag<int8_t>{});
    case ffi::DataType::S16: return f(Tag<int16_t>{});
    case ffi::DataType::S32: return f(Tag<int32_t>{});
    case ffi::DataType::S64: return f(Tag<int64_t>{});
    case ffi::DataType::U8: return f(Tag<uint8_t>{});
    case ffi::DataType::U16: return f(Tag<uint16_t>{});
    case ffi::DataType::U32: return f(Tag<uint32_t>{});
    case ffi::DataType::U64: return f(Tag<uint64_t>{});
    case ffi::DataType::F16: return f(Tag<half_t>{});
    case ffi::DataType::F32: return f(Tag<float>{});
    case ffi::DataType::F64: return f(Tag<double>{});
    default: return ffi::Error::InvalidArgument("eventjax native kernel: events must be bool, an integer or a float");
  }
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

}  // namespace ej
