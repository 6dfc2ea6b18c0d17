// The test oracle: serial, long-double accumulation, independent of every backend under test.
#pragma once
#include <cmath>
#include <cstdint>
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

}  // namespace test::oracle
