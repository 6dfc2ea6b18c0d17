// reduce::multi_dot (m dot products in one pass) and its CPU twin: every type, m in {1, 2, 3, 6, 8}, each
// vector at its own element offset, against a long-double oracle computed here; the bound derived in
// reduce.hpp (k = multi_dot_chain_length), shown able to fail; run-to-run bits, the three overloads'
// agreement, the workspace left ready, entries past m untouched, and the argument checks.
#include <boost/mpl/list.hpp>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <stdexcept>
#include <type_traits>
#include <vector>

#include "gpukit/device_buffer.hpp"
#include "reduce/reduce.hpp"
#include "reduce_paths.hpp"
#include "test_support.hpp"

namespace {

using all_types = boost::mpl::list<std::int32_t, std::int64_t, std::uint32_t, std::uint64_t, float, double>;
using float_types = boost::mpl::list<float, double>;

constexpr int max_m = reduce::multi_dot_max;
const std::vector<int> counts = {1, 2, 3, 6, 8};

template <class T>
bool same_bits(T a, T b) {
  return std::memcmp(&a, &b, sizeof(T)) == 0;
}

/// Floats come in two kinds. `rounded`: uniform in [1/2, 3/2), so every product is positive and
/// |x . y| = sum |x_i y_i|: the bound gamma(k + 1) sum|x_i y_i| rejects 0 whenever gamma(k + 1) < 1, for any
/// seed (mean-1/2 data, as the dot tests use, can cancel to near 0 at n = 2 or 3). `exact`: integers in
/// [-2, 2], so every partial sum in any order or tree is an integer of magnitude <= 4n < 2^24 for
/// n < 2^22 (every size here), exact in float (fused multiply-adds included) and double: the result must
/// equal the oracle, and a dropped or repeated element changes it by >= 1 (cancellation included).
/// Integers: as the dot tests, |x| <= 1000 (exact modulo 2^bits; int32 sums wrap at the larger sizes).
enum class kind { rounded, exact };

template <class T>
std::vector<T> fill(kind k, std::int64_t len, std::uint64_t stream) {
  if constexpr (std::is_floating_point_v<T>) {
    if (k == kind::rounded) return test::random_vector<T>(len, T(0.5), T(1.5), stream);
    const std::vector<int> v = test::random_vector<int>(len, -2, 2, stream);
    return std::vector<T>(v.begin(), v.end());
  } else if constexpr (std::is_signed_v<T>) {
    return test::random_vector<T>(len, T(-1000), T(1000), stream);
  } else {
    return test::random_vector<T>(len, T(0), T(1000), stream);
  }
}

/// max_m (or `pairs`) pairs of n-element vectors, each a view into its own allocation of n + 3 elements at its own
/// element offset: x_j at j % 4, y_j at (3 j + 1) % 4 (so x_j and y_j never share their misalignment;
/// cudaMalloc's 256-byte alignment makes the device copies misaligned by the same elements). The last
/// element of every view is nonzero, so that the last product is too (a dropped last element shows).
template <class T>
struct vector_set {
  std::int64_t n = 0;
  std::vector<std::vector<T>> x, y;
  static std::int64_t x_offset(int j) { return j % 4; }
  static std::int64_t y_offset(int j) { return (3 * j + 1) % 4; }
  const T* xv(int j) const { return x[static_cast<std::size_t>(j)].data() + x_offset(j); }
  const T* yv(int j) const { return y[static_cast<std::size_t>(j)].data() + y_offset(j); }
};

template <class T>
vector_set<T> make_set(kind k, std::int64_t n, std::uint64_t stream, int pairs = max_m) {
  vector_set<T> s;
  s.n = n;
  for (int j = 0; j < pairs; ++j) {
    s.x.push_back(fill<T>(k, n + 3, stream * 100 + 2 * static_cast<std::uint64_t>(j)));
    s.y.push_back(fill<T>(k, n + 3, stream * 100 + 2 * static_cast<std::uint64_t>(j) + 1));
    if (n > 0) {
      T& lx = s.x.back()[static_cast<std::size_t>(vector_set<T>::x_offset(j) + n - 1)];
      T& ly = s.y.back()[static_cast<std::size_t>(vector_set<T>::y_offset(j) + n - 1)];
      if (lx == T(0)) lx = T(1);
      if (ly == T(0)) ly = T(1);
    }
  }
  return s;
}

/// The oracle, independent of every backend: a serial long-double loop (x86's long double has a 64-bit
/// significand: a product of floats is exact in it, a product of doubles rounds by at most 2^-64
/// relative, far inside every bound checked), and the integer dot wrapped modulo 2^bits.
template <class T>
struct dot_oracle {
  long double sum = 0;      // sum x_i y_i
  long double abs_sum = 0;  // sum |x_i y_i|: scales the bound
  long double last = 0;     // x_{n-1} y_{n-1}
  T wrapped = T(0);
};
template <class T>
dot_oracle<T> oracle_dot(const T* x, const T* y, std::int64_t n) {
  dot_oracle<T> o;
  using W = std::make_unsigned_t<std::conditional_t<std::is_floating_point_v<T>, int, T>>;
  W w = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const long double p = static_cast<long double>(x[i]) * static_cast<long double>(y[i]);
    o.sum += p;
    o.abs_sum += std::fabs(p);
    o.last = p;
    if constexpr (!std::is_floating_point_v<T>) w = static_cast<W>(w + static_cast<W>(x[i]) * static_cast<W>(y[i]));
  }
  if constexpr (!std::is_floating_point_v<T>) o.wrapped = static_cast<T>(w);
  return o;
}

// ---- the checkers (each is fed wrong results by wrong_multi_dots_are_rejected below) ----

/// Rounded floats: |got - exact| <= bound.
template <class T>
boost::test_tools::predicate_result rounded_ok(const dot_oracle<T>& o, double got, double bound) {
  return test::within_bound(got, o.sum, bound);
}
/// The CUDA bound (reduce.hpp): gamma_T(k + 1) sum |x_i y_i|, k = multi_dot_chain_length(n, m, sizeof(T)).
template <class T>
double cuda_bound(const dot_oracle<T>& o, double k) {
  return test::gamma<T>(k + 1) * static_cast<double>(o.abs_sum);
}
/// Exact inputs and integers: ==.
template <class T>
boost::test_tools::predicate_result exact_ok(const dot_oracle<T>& o, T got) {
  bool ok = false;
  if constexpr (std::is_floating_point_v<T>) ok = static_cast<long double>(got) == o.sum;
  else ok = got == o.wrapped;
  if (ok) return true;
  boost::test_tools::predicate_result r(false);
  if constexpr (std::is_floating_point_v<T>)
    r.message() << "computed " << got << " vs exact " << static_cast<double>(o.sum) << " (every partial sum is exact)";
  else
    r.message() << "computed " << got << " vs exact " << o.wrapped << " (modulo 2^bits)";
  return r;
}

/// One result j of m against its oracle: exactly for integers and exact inputs, within `bound` otherwise.
template <class T>
boost::test_tools::predicate_result result_ok(kind k, const dot_oracle<T>& o, T got, double bound) {
  if (std::is_floating_point_v<T> && k == kind::rounded) return rounded_ok(o, static_cast<double>(got), bound);
  return exact_ok(o, got);
}

/// An upper bound on multi_dot_chain_length on ANY device, so that a CPU case can use it. The chain
/// (multi_dot_kernel.cuh) is per-thread + 2 log2(threads) + collected partials with 256 threads, U <= 8
/// elements per vector and tile, and grid in [1, 4096]: per thread <= ceil(ceil(n / 256U) / grid) U <=
/// (n / 256U + 1) U <= n / 256 + 8; the two trees 16; the partials <= 4096 / 256 = 16. So <= n / 256 + 40;
/// the GPU case below checks it against the device's k.
double chain_upper_bound(std::int64_t n) { return static_cast<double>(n) / 256 + 40; }

std::vector<std::int64_t> multi_dot_sizes() {
  // 0, 1, warp +- 1, 4097 (past one tile of every M: 256 x U elements), 2^16 + 1, a prime of a few grids'
  // worth and 3 x 2^20 + 7, a multi-block grid (a wave on an H100 at every m) with a partial last tile.
  std::vector<std::int64_t> s = {0, 1, 31, 32, 33, 4097, (std::int64_t{1} << 16) + 1, 1000003, 3 * (std::int64_t{1} << 20) + 7};
  if (test::reduced_sizes()) s.erase(std::remove_if(s.begin(), s.end(), [](std::int64_t n) { return n > 17000; }), s.end());
  return s;
}

// ---- CUDA ----

template <class T>
void check_cuda(kind k, std::int64_t n, std::uint64_t stream) {
  const vector_set<T> set = make_set<T>(k, n, stream);
  std::vector<gpukit::device_buffer<T>> dx, dy;
  const T* xs[max_m];
  const T* ys[max_m];
  std::vector<dot_oracle<T>> oracle;
  for (int j = 0; j < max_m; ++j) {
    dx.emplace_back(set.x[static_cast<std::size_t>(j)]);
    dy.emplace_back(set.y[static_cast<std::size_t>(j)]);
    xs[j] = dx.back().data() + vector_set<T>::x_offset(j);
    ys[j] = dy.back().data() + vector_set<T>::y_offset(j);
    oracle.push_back(oracle_dot(set.xv(j), set.yv(j), n));
  }
  const T poison = test::poison_value<T>();
  gpukit::device_buffer<T> out(max_m + 2);  // two entries past the largest m
  for (int m : counts) {
    BOOST_TEST_CONTEXT("n = " << n << ", m = " << m << (k == kind::exact ? ", exact inputs" : "")) {
      const double chain = static_cast<double>(reduce::multi_dot_chain_length(n, m, sizeof(T)));
      auto pool_run = [&] {
        out.fill_bytes(test::poison_byte);
        reduce::multi_dot(xs, ys, m, n, out.data());
        return out.download();
      };
      const std::vector<T> first = pool_run();
      for (int j = 0; j < m; ++j) {
        BOOST_TEST_CONTEXT("result " << j) {
          BOOST_TEST(result_ok(k, oracle[static_cast<std::size_t>(j)], first[static_cast<std::size_t>(j)],
                               cuda_bound(oracle[static_cast<std::size_t>(j)], chain)));
        }
      }
      for (std::size_t j = static_cast<std::size_t>(m); j < first.size(); ++j) BOOST_TEST(same_bits(first[j], poison));
      // Run to run: the same bits.
      const std::vector<T> second = pool_run();
      for (std::size_t j = 0; j < first.size(); ++j) BOOST_TEST(same_bits(second[j], first[j]));
      // A workspace: the same bits, twice on one workspace (the first call must leave its ticket and slots
      // at zero), and then a multi-block sum on it must be right too (sum's pool run: its bits).
      reduce::workspace ws;
      for (int twice = 0; twice < 2; ++twice) {
        out.fill_bytes(test::poison_byte);
        reduce::multi_dot(xs, ys, m, n, out.data(), ws);
        const std::vector<T> w = out.download();
        for (std::size_t j = 0; j < first.size(); ++j) BOOST_TEST(same_bits(w[j], first[j]));
      }
      gpukit::device_buffer<T> s(1);
      reduce::sum(xs[0], n, s.data(), ws);
      BOOST_TEST(same_bits(s.download()[0], reduce::sum(xs[0], n)));
      // The host result: m values, the same bits.
      const std::vector<T> h = reduce::multi_dot(xs, ys, m, n);
      BOOST_TEST(h.size() == static_cast<std::size_t>(m));
      for (std::size_t j = 0; j < h.size() && j < first.size(); ++j) BOOST_TEST(same_bits(h[j], first[j]));
    }
  }
}

template <class T>
void check_cuda_all_sizes() {
  std::uint64_t stream = 9100;
  for (std::int64_t n : multi_dot_sizes()) {
    check_cuda<T>(kind::rounded, n, ++stream);
    if constexpr (std::is_floating_point_v<T>) check_cuda<T>(kind::exact, n, ++stream);
  }
}

// ---- CPU reference ----

template <class T>
void check_reference(kind k, std::int64_t n, std::uint64_t stream) {
  const vector_set<T> set = make_set<T>(k, n, stream);
  const T* xs[max_m];
  const T* ys[max_m];
  for (int j = 0; j < max_m; ++j) {
    xs[j] = set.xv(j);
    ys[j] = set.yv(j);
  }
  for (int m : counts) {
    BOOST_TEST_CONTEXT("n = " << n << ", m = " << m << (k == kind::exact ? ", exact inputs" : "")) {
      std::vector<T> out(max_m + 2, test::poison_value<T>());
      reduce::reference::multi_dot(xs, ys, m, n, out.data());
      for (int j = 0; j < m; ++j) {
        const auto uj = static_cast<std::size_t>(j);
        BOOST_TEST_CONTEXT("result " << j) {
          // The CPU twin is reference::dot for each j, bit for bit.
          BOOST_TEST(same_bits(out[uj], reduce::reference::dot(xs[j], ys[j], n)));
          // And within the reference's bound (reduce_paths.hpp: products and sums in double, one rounding
          // to T; `extra` 1 for a product of doubles).
          const dot_oracle<T> o = oracle_dot(xs[j], ys[j], n);
          const double bound = test::reduction_bound<T>(test::path::reference, n, o.abs_sum, o.sum, 1);
          BOOST_TEST(result_ok(k, o, out[uj], bound));
        }
      }
      for (std::size_t j = static_cast<std::size_t>(m); j < out.size(); ++j) BOOST_TEST(same_bits(out[j], test::poison_value<T>()));
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(multi_dot)

CPU_TEST_CASE_TEMPLATE(reference_multi_dot_matches_dot_and_oracle, T, all_types) {
  // Sizes on both sides of the reference's OpenMP threshold (2^16: one chunk per thread above it).
  std::uint64_t stream = 9000;
  for (std::int64_t n : {0, 1, 2, 31, 32, 33, 1000, 4097, 65535, 65537, 1000003}) {
    check_reference<T>(kind::rounded, n, ++stream);
    if constexpr (std::is_floating_point_v<T>) check_reference<T>(kind::exact, n, ++stream);
  }
}

GPU_TEST_CASE_TEMPLATE(cuda_multi_dot_matches_oracle, T, all_types) { check_cuda_all_sizes<T>(); }

GPU_TEST_CASE(cuda_multi_dot_chain_upper_bound_holds_on_this_device) {
  for (std::int64_t n : multi_dot_sizes()) {
    for (int m = 0; m <= max_m; ++m) {
      BOOST_TEST_CONTEXT("n = " << n << ", m = " << m) {
        BOOST_TEST(static_cast<double>(reduce::multi_dot_chain_length(n, m, sizeof(float))) <= chain_upper_bound(n));
        BOOST_TEST(static_cast<double>(reduce::multi_dot_chain_length(n, m, sizeof(double))) <= chain_upper_bound(n));
      }
    }
  }
}

/// The checkers reject wrong results: with rounded inputs, 0 under the CUDA bound at its largest on any
/// device (chain_upper_bound: gamma_T(k + 1) < 1 for every n here) and under the reference's; with exact
/// inputs the dot without its last element, with the last element twice, off by one, and 0. The right
/// answers pass, so the rejections are the checkers', not a broken bound.
template <class T>
void check_wrong_multi_dots_are_rejected() {
  std::uint64_t stream = 9500;
  for (std::int64_t n : {1, 2, 3, 31, 4097, 65537, 1000003, 3 * (1 << 20) + 7}) {
    BOOST_TEST_CONTEXT("n = " << n) {
      const vector_set<T> r = make_set<T>(kind::rounded, n, ++stream, 1);
      const dot_oracle<T> o = oracle_dot(r.xv(0), r.yv(0), n);
      const double cuda = cuda_bound(o, chain_upper_bound(n));
      const double ref = test::reduction_bound<T>(test::path::reference, n, o.abs_sum, o.sum, 1);
      BOOST_TEST(!rounded_ok(o, 0.0, cuda));
      BOOST_TEST(!rounded_ok(o, 0.0, ref));
      BOOST_TEST(rounded_ok(o, static_cast<double>(o.sum), cuda));
      BOOST_TEST(rounded_ok(o, static_cast<double>(o.sum), ref));

      const vector_set<T> e = make_set<T>(kind::exact, n, ++stream, 1);
      const dot_oracle<T> oe = oracle_dot(e.xv(0), e.yv(0), n);
      const auto exact = static_cast<T>(oe.sum);
      const auto last = static_cast<T>(oe.last);  // nonzero: make_set makes both last elements nonzero
      BOOST_TEST(last != T(0));
      BOOST_TEST(exact_ok(oe, exact));
      BOOST_TEST(!exact_ok(oe, static_cast<T>(exact - last)));  // dropped the last element
      BOOST_TEST(!exact_ok(oe, static_cast<T>(exact + last)));  // the last element twice
      BOOST_TEST(!exact_ok(oe, static_cast<T>(exact + T(1))));
      if (exact != T(0)) BOOST_TEST(!exact_ok(oe, T(0)));
    }
  }
}
CPU_TEST_CASE(wrong_float_multi_dots_are_rejected) { check_wrong_multi_dots_are_rejected<float>(); }
CPU_TEST_CASE(wrong_double_multi_dots_are_rejected) { check_wrong_multi_dots_are_rejected<double>(); }

/// m outside [0, multi_dot_max], n < 0, null pointer arrays and a pointer that is not a valid T* throw
/// std::invalid_argument, from the CPU twin and from the CUDA entry points alike; the CUDA ones check
/// before any CUDA call, which this case shows by running where there is no device too (a CUDA call
/// would throw gpukit::cuda_error there, not std::invalid_argument). m = 0 does nothing.
CPU_TEST_CASE(multi_dot_arguments_are_checked) {
  const std::vector<float> v(16, 1.f);
  const float* xs[max_m + 1];
  for (auto& p : xs) p = v.data();
  float out[max_m + 1] = {};
  for (int m : {-1, max_m + 1}) {
    BOOST_TEST_CONTEXT("m = " << m) {
      BOOST_CHECK_THROW(reduce::reference::multi_dot(xs, xs, m, 16, out), std::invalid_argument);
      BOOST_CHECK_THROW(reduce::multi_dot(xs, xs, m, 16, out), std::invalid_argument);
      BOOST_CHECK_THROW(reduce::multi_dot(xs, xs, m, 16), std::invalid_argument);
      BOOST_CHECK_THROW(reduce::multi_dot_chain_length(16, m, sizeof(float)), std::invalid_argument);
    }
  }
  BOOST_CHECK_THROW(reduce::reference::multi_dot(xs, xs, 2, -1, out), std::invalid_argument);
  BOOST_CHECK_THROW(reduce::multi_dot(xs, xs, 2, -1, out), std::invalid_argument);
  BOOST_CHECK_THROW(reduce::multi_dot(xs, xs, 2, -1), std::invalid_argument);
  BOOST_CHECK_THROW(reduce::multi_dot_chain_length(-1, 2, sizeof(float)), std::invalid_argument);
  BOOST_CHECK_THROW(reduce::reference::multi_dot<float>(nullptr, xs, 2, 16, out), std::invalid_argument);
  BOOST_CHECK_THROW(reduce::multi_dot<float>(xs, nullptr, 2, 16, out), std::invalid_argument);
  // A pointer one byte into a float (never dereferenced: the check comes first), as the second y.
  const float* bad = reinterpret_cast<const float*>(reinterpret_cast<const char*>(v.data()) + 1);
  const float* ys[2] = {v.data(), bad};
  BOOST_CHECK_THROW(reduce::multi_dot(xs, ys, 2, 16, out), std::invalid_argument);
  BOOST_CHECK_THROW(reduce::multi_dot(xs, ys, 2, 16), std::invalid_argument);
  // m = 0: nothing is read or written, and no device is needed.
  out[0] = 7.f;
  reduce::reference::multi_dot<float>(nullptr, nullptr, 0, 16, out);
  reduce::multi_dot<float>(nullptr, nullptr, 0, 16, out);
  BOOST_TEST(reduce::multi_dot<float>(nullptr, nullptr, 0, 16).empty());
  BOOST_TEST(out[0] == 7.f);
}

/// The workspace overload checks as the others do, before its launch, and m = 0 leaves d_out alone.
GPU_TEST_CASE_TEMPLATE(cuda_multi_dot_workspace_overload_checks_its_arguments, T, float_types) {
  gpukit::device_buffer<T> d(std::vector<T>(64, T(1))), out(4);
  out.fill_bytes(test::poison_byte);
  reduce::workspace ws;
  const T* bad = reinterpret_cast<const T*>(reinterpret_cast<const char*>(d.data()) + 1);
  const T* xs[2] = {d.data(), d.data() + 1};  // whole-element offsets are fine
  const T* ys[2] = {d.data() + 3, bad};
  BOOST_CHECK_THROW(reduce::multi_dot(xs, ys, 2, 16, out.data(), ws), std::invalid_argument);
  BOOST_CHECK_THROW(reduce::multi_dot(xs, xs, max_m + 1, 16, out.data(), ws), std::invalid_argument);
  BOOST_CHECK_THROW(reduce::multi_dot(xs, xs, 2, -1, out.data(), ws), std::invalid_argument);
  reduce::multi_dot(xs, xs, 0, 16, out.data(), ws);
  for (T v : out.download()) BOOST_TEST(same_bits(v, test::poison_value<T>()));
  reduce::multi_dot(xs, xs, 2, 16, out.data(), ws);  // and the workspace still serves a valid call
  const std::vector<T> got = out.download();
  BOOST_TEST(got[0] == T(16));
  BOOST_TEST(got[1] == T(16));
  BOOST_TEST(same_bits(got[2], test::poison_value<T>()));
}

BOOST_AUTO_TEST_SUITE_END()
