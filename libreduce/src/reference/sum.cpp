// CPU backend of reduce::sum: plain loops, OpenMP across threads, wide accumulators.
#include <cstdint>
#include <stdexcept>
#include <string>
#include <type_traits>

#include "reduce/reduce.hpp"

namespace reduce::reference {

template <class T>
T sum(const T* in, std::int64_t n) {
  if (n < 0) throw std::invalid_argument("reduce::reference::sum: negative element count " + std::to_string(n));
  // Floats accumulate in double (one rounding at the end). Integers accumulate unsigned so that overflow
  // wraps modulo 2^bits, as on the GPU, instead of being undefined.
  using acc_t = std::conditional_t<std::is_floating_point_v<T>, double, std::make_unsigned_t<
                                   std::conditional_t<std::is_floating_point_v<T>, int, T>>>;
  acc_t total = 0;
#pragma omp parallel for reduction(+ : total) schedule(static)
  for (std::int64_t i = 0; i < n; ++i) total += static_cast<acc_t>(in[i]);
  return static_cast<T>(total);
}

template std::int32_t sum(const std::int32_t*, std::int64_t);
template std::int64_t sum(const std::int64_t*, std::int64_t);
template std::uint32_t sum(const std::uint32_t*, std::int64_t);
template std::uint64_t sum(const std::uint64_t*, std::int64_t);
template float sum(const float*, std::int64_t);
template double sum(const double*, std::int64_t);

}  // namespace reduce::reference
