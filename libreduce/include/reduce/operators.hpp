// Reduction operators, usable on host and device. No CUDA headers: REDUCE_HD expands to
// __host__ __device__ only under nvcc.
#pragma once
#include <cstdint>
#include <limits>
#include <type_traits>

#if defined(__CUDACC__)
#define REDUCE_HD __host__ __device__ __forceinline__
#else
#define REDUCE_HD inline
#endif

namespace reduce {

namespace detail {
template <class T>
REDUCE_HD bool is_nan(T v) {
  if constexpr (std::is_floating_point_v<T>) return v != v;
  else return false;
}
}  // namespace detail

/// a + b. Commutative; associative for integers (mod 2^bits), only approximately for floats.
struct plus {
  template <class T>
  REDUCE_HD T operator()(T a, T b) const { return a + b; }
  template <class T>
  static constexpr T identity() { return T(0); }
};

/// The smaller of a and b; a NaN operand wins (NaN propagates, like IEEE 754-2019 minimum, so a NaN in
/// the input is never silently dropped). Commutative and associative, so results are exact and
/// independent of the reduction order.
struct minimum {
  template <class T>
  REDUCE_HD T operator()(T a, T b) const {
    if (detail::is_nan(a)) return a;
    if (detail::is_nan(b)) return b;
    return b < a ? b : a;
  }
  template <class T>
  static constexpr T identity() {
    if constexpr (std::numeric_limits<T>::has_infinity) return std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::max();
  }
};

/// The larger of a and b; a NaN operand wins (see minimum).
struct maximum {
  template <class T>
  REDUCE_HD T operator()(T a, T b) const {
    if (detail::is_nan(a)) return a;
    if (detail::is_nan(b)) return b;
    return a < b ? b : a;
  }
  template <class T>
  static constexpr T identity() {
    if constexpr (std::numeric_limits<T>::has_infinity) return -std::numeric_limits<T>::infinity();
    else return std::numeric_limits<T>::lowest();
  }
};

}  // namespace reduce
