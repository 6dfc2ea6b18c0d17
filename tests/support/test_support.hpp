// Shared test support: GPU/CPU test-case macros, fixed-seed random fills, output poisoning, the hostile
// sizes list and error bounds (each written next to its derivation).
#pragma once
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <type_traits>
#include <vector>

#include "reduce/device.hpp"

namespace test {

/// Boost.Test precondition: a `gpu` case without a CUDA device is reported SKIPPED with the reason,
/// never passed.
inline boost::test_tools::assertion_result cuda_device_present(boost::unit_test::test_unit_id) {
  boost::test_tools::assertion_result r(reduce::cuda_device_available());
  if (!r) r.message() << reduce::cuda_unavailable_reason();
  return r;
}

/// One seed for the whole run, printed once, overridable with GPUKIT_TEST_SEED so a failure reproduces.
/// Each call of rng(stream) gives an independent generator for one input.
inline std::uint64_t base_seed() {
  static const std::uint64_t seed = [] {
    const char* env = std::getenv("GPUKIT_TEST_SEED");
    const std::uint64_t s = env ? std::strtoull(env, nullptr, 0) : 0x5eed2026ull;
    BOOST_TEST_MESSAGE("random inputs: GPUKIT_TEST_SEED=" << s);
    return s;
  }();
  return seed;
}
inline std::mt19937_64 rng(std::uint64_t stream) { return std::mt19937_64(base_seed() * 0x9E3779B97F4A7C15ull + stream); }

/// n values uniform in [lo, hi) (integers: inclusive), from the generator for `stream`.
template <class T>
std::vector<T> random_vector(std::int64_t n, T lo, T hi, std::uint64_t stream) {
  auto g = rng(stream);
  std::vector<T> v(static_cast<std::size_t>(n));
  if constexpr (std::is_floating_point_v<T>) {
    std::uniform_real_distribution<T> d(lo, hi);
    for (auto& x : v) x = d(g);
  } else {
    std::uniform_int_distribution<T> d(lo, hi);
    for (auto& x : v) x = d(g);
  }
  return v;
}

/// The byte a test writes over every output before a run: 0xFF makes floats NaN and integers -1 / max,
/// so an element the kernel forgot to write cannot pass as a correct zero.
constexpr int poison_byte = 0xFF;
template <class T>
T poison_value() {
  T v;
  std::memset(&v, poison_byte, sizeof v);
  return v;
}

/// Sizes every variant must meet: empty, one element, around the warp (32) and block (256, 1024) sizes,
/// 2^k +- 1, and primes that are multiples of nothing.
inline std::vector<std::int64_t> hostile_sizes() {
  // 4096 and 16384: exactly one full tile of the one-block shapes (16 KiB and 64 KiB of float).
  std::vector<std::int64_t> s = {0,    1,    2,    3,    31,   32,   33,   63,   64,   65,   255,
                                 256,  257,  1000, 1023, 1024, 1025, 4095, 4096, 4097, 16384};
  for (int k : {13, 16, 18, 20}) {
    s.push_back((std::int64_t{1} << k) - 1);
    s.push_back((std::int64_t{1} << k) + 1);
  }
  s.push_back(1000003);   // prime
  s.push_back(3000017);   // prime, past several full grids
  return s;
}

/// gamma(k) = k u / (1 - k u), u = eps/2: the classic bound (Higham, Accuracy and Stability, 3.1) on the
/// relative error of k floating-point operations in a chain. A sum of n terms in ANY order has error at
/// most gamma(n - 1) * sum |x_i|; a tree of depth d, at most gamma(d) * sum |x_i|. Infinity once k u >= 1.
template <class T>
double gamma(double k) {
  const double u = std::numeric_limits<T>::epsilon() / 2.0;
  return k * u < 1.0 ? k * u / (1.0 - k * u) : std::numeric_limits<double>::infinity();
}

/// |computed - exact| <= bound, with NaN never passing. Reports both values on failure.
inline boost::test_tools::predicate_result within_bound(double computed, long double exact, double bound) {
  const double err = static_cast<double>(std::fabs(static_cast<long double>(computed) - exact));
  if (err <= bound) return true;
  boost::test_tools::predicate_result r(false);
  r.message() << "computed " << computed << " vs exact " << static_cast<double>(exact) << ": |error| " << err
              << " > bound " << bound;
  return r;
}

}  // namespace test

/// A test case that needs a CUDA device: labelled `gpu`, skipped with the reason when none is present.
#define GPU_TEST_CASE(name)                                                              \
  BOOST_AUTO_TEST_CASE(name, *boost::unit_test::label("gpu") *                          \
                                 boost::unit_test::precondition(::test::cuda_device_present))
/// A test case that runs everywhere (CPU backends, oracles, parsers): labelled `cpu`.
#define CPU_TEST_CASE(name) BOOST_AUTO_TEST_CASE(name, *boost::unit_test::label("cpu"))
/// Typed versions: one test case per type in the Boost.MPL list `types`.
#define GPU_TEST_CASE_TEMPLATE(name, T, types)                                                  \
  BOOST_TEST_DECORATOR(*boost::unit_test::label("gpu") *                                       \
                       boost::unit_test::precondition(::test::cuda_device_present))            \
  BOOST_AUTO_TEST_CASE_TEMPLATE(name, T, types)
#define CPU_TEST_CASE_TEMPLATE(name, T, types)              \
  BOOST_TEST_DECORATOR(*boost::unit_test::label("cpu"))     \
  BOOST_AUTO_TEST_CASE_TEMPLATE(name, T, types)
