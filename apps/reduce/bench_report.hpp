// Helpers shared by `reduce ladder` and `reduce bench`: fast reproducible host inputs and number
// formatting. (Reports go through apps/common/report.hpp.)
#pragma once
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace reduce_app::report {

/// splitmix64: a fast, well-mixed generator; inputs of 2^28 elements take well under a second.
class splitmix64 {
public:
  explicit splitmix64(std::uint64_t seed) : s_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (s_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// uniform in [lo, hi)
  double uniform(double lo, double hi) { return lo + (hi - lo) * static_cast<double>(next() >> 11) * 0x1.0p-53; }

private:
  std::uint64_t s_;
};

inline std::vector<float> uniform_floats(std::int64_t n, float lo, float hi, std::uint64_t seed) {
  std::vector<float> v(static_cast<std::size_t>(n));
  splitmix64 g(seed);
  for (auto& x : v) x = static_cast<float>(g.uniform(lo, hi));
  return v;
}

inline std::vector<std::int32_t> uniform_ints(std::int64_t n, std::int32_t lo, std::int32_t hi, std::uint64_t seed) {
  std::vector<std::int32_t> v(static_cast<std::size_t>(n));
  splitmix64 g(seed);
  const auto span = static_cast<std::uint64_t>(static_cast<std::int64_t>(hi) - lo + 1);
  for (auto& x : v) x = static_cast<std::int32_t>(lo + static_cast<std::int64_t>(g.next() % span));
  return v;
}

/// printf into a std::string.
template <class... A>
std::string format(const char* fmt, A... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, fmt, args...);
  return buf;
}

/// "2^22" when n is a power of two, else the number.
inline std::string size_label(std::int64_t n) {
  if (n > 0 && (n & (n - 1)) == 0) {
    int k = 0;
    while ((std::int64_t{1} << k) < n) ++k;
    return "2^" + std::to_string(k);
  }
  return std::to_string(n);
}

/// gamma(k) = k u / (1 - k u) for float (u = 2^-24); infinity once k u >= 1.
inline double gamma_float(double k) {
  const double u = std::numeric_limits<float>::epsilon() / 2.0;
  return k * u < 1 ? k * u / (1 - k * u) : std::numeric_limits<double>::infinity();
}

}  // namespace reduce_app::report
