// The test oracle: serial, long-double accumulation, independent of every backend under test.
#pragma once
#include <cmath>
#include <cstdint>
#include <limits>
#include <type_traits>
#include <vector>

namespace test::oracle {

struct sum_result {
  long double sum = 0;      // sum x_i, in long double
  long double abs_sum = 0;  // sum |x_i|: scales the floating-point error bound
};

template <class T>
sum_result sum(const std::vector<T>& x) {
  sum_result r;
  for (T v : x) {
    r.sum += static_cast<long double>(v);
    r.abs_sum += std::fabs(static_cast<long double>(v));
  }
  return r;
}

/// Integer sum wrapped modulo 2^bits, as the backends define it.
template <class T>
T wrapped_sum(const std::vector<T>& x) {
  using U = std::make_unsigned_t<T>;
  U s = 0;
  for (T v : x) s = static_cast<U>(s + static_cast<U>(v));
  return static_cast<T>(s);
}

/// sum x_i^2 and sum x_i y_i in long double, with the matching sum of absolute values for the bound.
template <class T>
sum_result sum_of_squares(const std::vector<T>& x) {
  sum_result r;
  for (T v : x) {
    const long double l = static_cast<long double>(v);
    r.sum += l * l;
    r.abs_sum += l * l;
  }
  return r;
}
template <class T>
sum_result dot(const std::vector<T>& x, const std::vector<T>& y) {
  sum_result r;
  for (std::size_t i = 0; i < x.size(); ++i) {
    const long double p = static_cast<long double>(x[i]) * static_cast<long double>(y[i]);
    r.sum += p;
    r.abs_sum += std::fabs(p);
  }
  return r;
}

/// Integer sum of squares / dot product wrapped modulo 2^bits.
template <class T>
T wrapped_dot(const std::vector<T>& x, const std::vector<T>& y) {
  using U = std::make_unsigned_t<T>;
  U s = 0;
  for (std::size_t i = 0; i < x.size(); ++i) s = static_cast<U>(s + static_cast<U>(x[i]) * static_cast<U>(y[i]));
  return static_cast<T>(s);
}

/// The extremum and the FIRST index holding it (IsMax: maximum); a NaN beats every number and the
/// first NaN wins. n = 0: {identity, -1} with identity +inf / max (min) or -inf / lowest (max).
template <class T>
struct extremum {
  T value;
  std::int64_t index;
};
template <class T, bool IsMax>
extremum<T> arg_extremum(const std::vector<T>& x) {
  extremum<T> r{IsMax ? (std::numeric_limits<T>::has_infinity ? -std::numeric_limits<T>::infinity()
                                                              : std::numeric_limits<T>::lowest())
                      : (std::numeric_limits<T>::has_infinity ? std::numeric_limits<T>::infinity()
                                                              : std::numeric_limits<T>::max()),
                -1};
  for (std::size_t i = 0; i < x.size(); ++i) {
    const T v = x[i];
    if (v != v) return {v, static_cast<std::int64_t>(i)};  // first NaN
    if (r.index < 0 || (IsMax ? r.value < v : v < r.value)) r = {v, static_cast<std::int64_t>(i)};
  }
  return r;
}

}  // namespace test::oracle
