// Macros that define the three overloads of a precompiled entry point (reduce.hpp) from a reducer
// factory, and their explicit instantiations. For libreduce/src/cuda/*.cu only.
#pragma once
#include "dispatch.cuh"
#include "forced_shape.hpp"
#include "reducers.cuh"

// NAME(d_in, n, d_out, stream), NAME(d_in, n, d_out, ws, stream), NAME(d_in, n, stream) -> OUT,
// running the reducer returned by MAKE<T>().
#define REDUCE_DEFINE_UNARY(NAME, OUT, MAKE)                                                          \
  template <class T>                                                                                  \
  void NAME(const T* d_in, std::int64_t n, OUT* d_out, stream_t stream) {                             \
    detail::run(d_in, d_in, n, MAKE<T>(), d_out, nullptr, stream, "reduce::" #NAME);                  \
  }                                                                                                   \
  template <class T>                                                                                  \
  void NAME(const T* d_in, std::int64_t n, OUT* d_out, workspace& ws, stream_t stream) {              \
    detail::run(d_in, d_in, n, MAKE<T>(), d_out, &ws, stream, "reduce::" #NAME);                      \
  }                                                                                                   \
  template <class T>                                                                                  \
  OUT NAME(const T* d_in, std::int64_t n, stream_t stream) {                                          \
    return detail::to_host<OUT>(stream, [&](OUT* d_out) { NAME(d_in, n, d_out, stream); });           \
  }

#define REDUCE_INSTANTIATE_UNARY(NAME, OUT, T)                                   \
  template void NAME<T>(const T*, std::int64_t, OUT*, stream_t);                 \
  template void NAME<T>(const T*, std::int64_t, OUT*, workspace&, stream_t);     \
  template OUT NAME<T>(const T*, std::int64_t, stream_t);
