// Shared test support: GPU/CPU test-case macros, fixed-seed random fills, output poisoning, the hostile
// sizes list and error bounds (each written next to its derivation).
#pragma once
#include <boost/test/unit_test.hpp>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <limits>
#include <random>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "reduce/device.hpp"

namespace test {

/// GPUKIT_TEST_SHARD=k/N (0 <= k < N): this process runs only the gpu cases whose full name hashes
/// (FNV-1a) to k mod N, so scripts/gpu-check can spread one binary's cases over N sanitizer processes;
/// the others report themselves skipped. Unset (or malformed: then every case runs): all of them.
inline bool in_test_shard(boost::unit_test::test_unit_id id, std::string& why) {
  const char* e = std::getenv("GPUKIT_TEST_SHARD");
  unsigned k = 0, n = 0;
  if (e == nullptr || std::sscanf(e, "%u/%u", &k, &n) != 2 || n == 0 || k >= n) return true;
  std::uint64_t h = 1469598103934665603ull;
  for (const char c : boost::unit_test::framework::get(id, boost::unit_test::TUT_ANY).full_name())
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ull;
  if (h % n == k) return true;
  why = "not in GPUKIT_TEST_SHARD=" + std::string(e);
  return false;
}

/// Boost.Test precondition: a `gpu` case without a CUDA device is reported SKIPPED with the reason,
/// never passed (and one outside this process's GPUKIT_TEST_SHARD is skipped saying so). The shard is
/// asked first, so a shard process that runs no case never initializes CUDA: under synccheck two such
/// processes (test_dist_csr, then test_solve, of ~100 with no case) crashed at exit (SIGSEGV after main
/// returned), cause not found.
inline boost::test_tools::assertion_result cuda_device_present(boost::unit_test::test_unit_id id) {
  std::string why;
  if (!in_test_shard(id, why)) {
    boost::test_tools::assertion_result skip(false);
    skip.message() << why;
    return skip;
  }
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

/// Inputs for the ROUNDED float checks: uniform in [-1/2, 3/2), i.e. [-1, 1) shifted by a mean of 1/2.
/// Why not zero-mean: a sum's error bound is gamma(k) sum|x_i| ~ k u n/2 but a zero-mean sum is only
/// ~ sqrt(n/3), so with k ~ n (float: 3e-8 n^2) a kernel returning 0 passed from n ~ 1e5 on (issue 19).
/// With mean 1/2, |sum| ~ n/2 against sum|x| ~ 5n/8: any bound gamma(k) sum|x| with gamma(k) < 0.8 (float:
/// k < 1.1e7, every k the tests derive) rejects 0, and a quarter of the terms are negative, so the sums
/// still cancel.
template <class T>
std::vector<T> offset_vector(std::int64_t n, std::uint64_t stream) {
  std::vector<T> v = random_vector<T>(n, T(-1), T(1), stream);
  for (auto& x : v) x += T(0.5);  // rounded once where x is tiny; the oracle sees the stored values
  return v;
}

/// Inputs for the EXACT float checks: integers in [-4, 4] stored in T, the last one nonzero. Every partial
/// sum of them, in ANY order or tree, is an integer of magnitude <= sum|x_i| <= 4n < 2^24 for n < 2^22 (all
/// hostile sizes): exactly representable in float (24-bit significand) and double, so every summation
/// algorithm returns the exact sum and the check is ==. A dropped, repeated or perturbed element (the
/// last one is nonzero) changes the result by >= 1, which no rounding can hide.
template <class T>
std::vector<T> exactly_summable_vector(std::int64_t n, std::uint64_t stream) {
  if (n >= (std::int64_t{1} << 22)) throw std::invalid_argument("exactly_summable_vector: n >= 2^22 may round");
  const std::vector<int> k = random_vector<int>(n, -4, 4, stream);
  std::vector<T> v(k.begin(), k.end());
  if (n > 0 && v.back() == T(0)) v.back() = T(3);
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

/// True when GPUKIT_TEST_REDUCED is set (and not "0"): the compute-sanitizer pass of scripts/gpu-check runs
/// each GPU binary with it, so racecheck (which tracks every shared-memory access: ~100-1000x slower)
/// finishes in minutes. Reduced runs keep every shape class (empty, warp and block boundaries, 2^13 +- 1,
/// 16384: one full tile of the one-block shapes) and drop the sizes past 17,000 elements (2^16 +- 1 and
/// up: the multi-block grids still run on the fixed sizes of the other cases); cases that exist only for
/// large sizes report themselves skipped.
inline bool reduced_sizes() {
  const char* e = std::getenv("GPUKIT_TEST_REDUCED");
  return e != nullptr && *e != '\0' && std::string(e) != "0";
}

/// False when scripts/gpu-check runs compute-sanitizer's synccheck and its probe
/// (tests/sanitizers/conditional_graph_barrier.cu) showed that this synccheck reports, and aborts, a kernel
/// whose barrier every thread reaches once it runs inside a while-conditional graph body (it then sets
/// GPUKIT_SANITIZER_SKIP_CONDITIONAL_GRAPHS=1). The cases that run solves in graph mode skip there (or skip
/// their graph half), saying why; the same kernels run under synccheck in the host-loop cases.
inline bool conditional_graphs_checkable() {
  const char* e = std::getenv("GPUKIT_SANITIZER_SKIP_CONDITIONAL_GRAPHS");
  return e == nullptr || *e == '\0' || std::string(e) == "0";
}
/// The precondition form of conditional_graphs_checkable(), with the reason a skipped case reports.
struct conditional_graphs_check {
  boost::test_tools::assertion_result operator()(boost::unit_test::test_unit_id) const {
    boost::test_tools::assertion_result r(conditional_graphs_checkable());
    if (!r) r.message() << "graph-mode solves are not checkable under this synccheck (it aborts kernels inside "
                           "while-conditional graph bodies: tests/sanitizers/conditional_graph_barrier.cu)";
    return r;
  }
};

/// Sizes every variant must meet: empty, one element, around the warp (32) and block (256, 1024) sizes,
/// 2^k +- 1, and primes that are multiples of nothing (without the ones past 17,000 when reduced_sizes()).
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
  if (reduced_sizes()) s.erase(std::remove_if(s.begin(), s.end(), [](std::int64_t n) { return n > 17000; }), s.end());
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
/// A GPU test case that solves in graph mode (CUDA graphs with a while-conditional node): as GPU_TEST_CASE,
/// also labelled `graph` (scripts/gpu-check runs these cases under each sanitizer in a process of their own,
/// with no other sanitized process on the GPU), and skipped with the reason where
/// test::conditional_graphs_checkable() is false.
#define GPU_GRAPH_TEST_CASE(name)                                                                          \
  BOOST_AUTO_TEST_CASE(name, *boost::unit_test::label("gpu") * boost::unit_test::label("graph") *          \
                                 boost::unit_test::precondition(::test::cuda_device_present) *            \
                                 boost::unit_test::precondition(::test::conditional_graphs_check{}))
/// A test case that runs everywhere (CPU backends, oracles, parsers): labelled `cpu`.
#define CPU_TEST_CASE(name) BOOST_AUTO_TEST_CASE(name, *boost::unit_test::label("cpu"))
/// Typed versions: one test case per type in the Boost.MPL list `types`.
#define GPU_TEST_CASE_TEMPLATE(name, T, types)                                                  \
  BOOST_TEST_DECORATOR(*boost::unit_test::label("gpu") *                                       \
                       boost::unit_test::precondition(::test::cuda_device_present))            \
  BOOST_AUTO_TEST_CASE_TEMPLATE(name, T, types)
/// The typed GPU_GRAPH_TEST_CASE.
#define GPU_GRAPH_TEST_CASE_TEMPLATE(name, T, types)                                                      \
  BOOST_TEST_DECORATOR(*boost::unit_test::label("gpu") * boost::unit_test::label("graph") *               \
                       boost::unit_test::precondition(::test::cuda_device_present) *                     \
                       boost::unit_test::precondition(::test::conditional_graphs_check{}))               \
  BOOST_AUTO_TEST_CASE_TEMPLATE(name, T, types)
#define CPU_TEST_CASE_TEMPLATE(name, T, types)              \
  BOOST_TEST_DECORATOR(*boost::unit_test::label("cpu"))     \
  BOOST_AUTO_TEST_CASE_TEMPLATE(name, T, types)
