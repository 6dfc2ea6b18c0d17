// The teaching ladder: every rung x type x hostile size against the long-double oracle (GPU), and what
// runs on the CPU: the rung names, the oracle itself, and the serial rung's CPU twin.
#include <boost/mpl/list.hpp>

#include <cstdint>
#include <limits>
#include <set>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <vector>

#include "oracle.hpp"
#include "gpukit/device_buffer.hpp"
#include "reduce/ladder.hpp"
#include "test_support.hpp"

namespace {

using ladder_types = boost::mpl::list<std::int32_t, std::int64_t, float, double>;

template <class T>
std::vector<T> ladder_input(std::int64_t n, std::uint64_t stream) {
  // |x| <= 1000 keeps integer sums exact without wrapping at every hostile size (n < 2^22); wrapping
  // has its own case below.
  // Floats: mean 1/2 (test::offset_vector). The rungs' bound is gamma_T(k) sum|x| with k up to n - 1
  // (atomic_global, serial): ~0.2 sum|x| at n = 3e6, which a zero-mean sum (~ sqrt(n/3)) and 0 both met;
  // with mean 1/2, |sum| ~ n/2 > gamma_T(n) 5n/8 at every hostile size (gamma_T(3e6) = 0.22 < 0.8).
  if constexpr (std::is_floating_point_v<T>) return test::offset_vector<T>(n, stream);
  else return test::random_vector<T>(n, T(-1000), T(1000), stream);
}

std::int64_t largest_hostile_size() {
  std::int64_t m = 0;
  for (std::int64_t n : test::hostile_sizes()) m = std::max(m, n);
  return m;
}

// Runs `kernel` twice on the same workspace (the second call checks that the single-pass counter was
// re-armed and that the atomic rungs restart from zero), poisoning the output before each call.
template <class T>
std::vector<T> run_twice(reduce::ladder_kernel kernel, const gpukit::device_buffer<T>& x, reduce::ladder_workspace& ws) {
  gpukit::device_buffer<T> out(1);
  std::vector<T> results;
  for (int call = 0; call < 2; ++call) {
    out.fill_bytes(test::poison_byte);
    reduce::ladder_sum(kernel, x.data(), x.size(), out.data(), ws);
    results.push_back(out.download()[0]);
  }
  return results;
}

// ---- the checkers (fed wrong results by wrong_ladder_sums_are_rejected below) ----

/// A rung's float result on rounded inputs: |got - exact| <= gamma_T(k) * sum|x_i|, k = the rung's longest
/// accumulation path (ladder_error_depth; Higham 4.2; the atomic stages count as sums in any order, so
/// atomic_global has k = n - 1). The oracle is exact to long double, far below these bounds.
template <class T>
boost::test_tools::predicate_result ladder_rounded_ok(double depth, const std::vector<T>& x, T got) {
  const auto o = test::oracle::sum(x);
  return test::within_bound(static_cast<double>(got), o.sum, test::gamma<T>(depth) * static_cast<double>(o.abs_sum));
}
/// The exact sum: of exactly summable floats (test::exactly_summable_vector), or of integers modulo 2^bits.
template <class T>
T exact_sum(const std::vector<T>& x) {
  if constexpr (std::is_floating_point_v<T>) return static_cast<T>(test::oracle::sum(x).sum);
  else return test::oracle::wrapped_sum(x);
}
/// Exactly summable inputs and integers: every order is exact, so ==.
template <class T>
boost::test_tools::predicate_result ladder_exact_ok(const std::vector<T>& x, T got) {
  const T expected = exact_sum(x);
  if (got == expected) return true;
  boost::test_tools::predicate_result r(false);
  r.message() << "computed " << got << " vs exact " << expected;
  return r;
}

template <class T>
void check_against_oracle(reduce::ladder_kernel kernel, std::int64_t n, const std::vector<T>& x, T got) {
  if constexpr (std::is_floating_point_v<T>) {
    BOOST_TEST(ladder_rounded_ok(static_cast<double>(reduce::ladder_error_depth(kernel, n)), x, got));
  } else {
    BOOST_TEST(ladder_exact_ok(x, got));  // integers: exact
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(ladder)

// ---- GPU ------------------------------------------------------------------------------------------

GPU_TEST_CASE_TEMPLATE(every_rung_matches_oracle_at_every_hostile_size, T, ladder_types) {
  reduce::ladder_workspace ws(largest_hostile_size());
  std::uint64_t stream = 100;
  for (std::int64_t n : test::hostile_sizes()) {
    const std::vector<T> x = ladder_input<T>(n, ++stream);
    const gpukit::device_buffer<T> d(x);
    for (reduce::ladder_kernel k : reduce::all_ladder_kernels()) {
      BOOST_TEST_CONTEXT("rung " << reduce::to_string(k) << ", n = " << n) {
        const std::vector<T> got = run_twice(k, d, ws);
        check_against_oracle(k, n, x, got[0]);
        check_against_oracle(k, n, x, got[1]);
        // Deterministic rungs repeat bitwise (fixed grid, fixed combination order).
        if (reduce::is_deterministic(k) || !std::is_floating_point_v<T>) BOOST_TEST(got[0] == got[1]);
      }
    }
    if constexpr (std::is_floating_point_v<T>) {
      // Exactly summable inputs: a dropped or perturbed element, which the rounded bound cannot see at
      // large n (k up to n - 1), fails ==.
      const std::vector<T> e = test::exactly_summable_vector<T>(n, stream + 5000);
      const gpukit::device_buffer<T> de(e);
      for (reduce::ladder_kernel k : reduce::all_ladder_kernels()) {
        BOOST_TEST_CONTEXT("rung " << reduce::to_string(k) << ", n = " << n << ", exactly summable") {
          for (T got : run_twice(k, de, ws)) BOOST_TEST(ladder_exact_ok(e, got));
        }
      }
    }
  }
}

// Integer sums wrap modulo 2^32 on every rung (atomics, trees and serial alike), like reduce::sum.
GPU_TEST_CASE(int32_rungs_wrap_modulo_2_32) {
  const std::int64_t n = 100003;
  const auto x = test::random_vector<std::int32_t>(n, std::numeric_limits<std::int32_t>::min(),
                                                   std::numeric_limits<std::int32_t>::max(), 77);
  const gpukit::device_buffer<std::int32_t> d(x);
  reduce::ladder_workspace ws(n);
  const std::int32_t expected = test::oracle::wrapped_sum(x);
  for (reduce::ladder_kernel k : reduce::all_ladder_kernels()) {
    BOOST_TEST_CONTEXT("rung " << reduce::to_string(k)) { BOOST_TEST(run_twice(k, d, ws)[0] == expected); }
  }
}

// The serial rung and its CPU twin run the same loop in the same order in the same precision.
GPU_TEST_CASE_TEMPLATE(serial_rung_is_bitwise_its_cpu_twin, T, ladder_types) {
  reduce::ladder_workspace ws(100000);
  for (std::int64_t n : {std::int64_t{1}, std::int64_t{33}, std::int64_t{4097}, std::int64_t{100000}}) {
    const std::vector<T> x = ladder_input<T>(n, 500 + static_cast<std::uint64_t>(n));
    const gpukit::device_buffer<T> d(x);
    BOOST_TEST_CONTEXT("n = " << n) {
      BOOST_TEST(run_twice(reduce::ladder_kernel::serial, d, ws)[0] == reduce::reference::ladder_serial_sum(x.data(), n));
    }
  }
}

GPU_TEST_CASE(bad_sizes_are_rejected) {
  reduce::ladder_workspace ws(1000);
  gpukit::device_buffer<float> x(1001), out(1);
  BOOST_CHECK_THROW(reduce::ladder_sum(reduce::ladder_kernel::shuffle, x.data(), 1001, out.data(), ws),
                    std::invalid_argument);
  BOOST_CHECK_THROW(reduce::ladder_sum(reduce::ladder_kernel::shuffle, x.data(), -1, out.data(), ws),
                    std::invalid_argument);
  BOOST_CHECK_THROW(reduce::ladder_error_depth(reduce::ladder_kernel::serial, -1), std::invalid_argument);
}

// ---- CPU ------------------------------------------------------------------------------------------

CPU_TEST_CASE(rung_names_round_trip_and_are_unique) {
  const auto all = reduce::all_ladder_kernels();
  BOOST_TEST(all.size() == 16u);
  std::set<std::string> names;
  for (reduce::ladder_kernel k : all) {
    const std::string name = reduce::to_string(k);
    BOOST_TEST_CONTEXT("rung " << name) {
      BOOST_TEST((reduce::parse_ladder_kernel(name) == k));
      BOOST_TEST(std::string(reduce::describe(k)).size() > 10u);
    }
    names.insert(name);
  }
  BOOST_TEST(names.size() == all.size());
  // ladder order: the baseline first, the seeds' last rung last
  BOOST_TEST((all.front() == reduce::ladder_kernel::serial));
  BOOST_TEST((all.back() == reduce::ladder_kernel::single_pass_last_block));
}

CPU_TEST_CASE(unknown_rung_name_is_rejected_with_the_valid_list) {
  try {
    (void)reduce::parse_ladder_kernel("harris8");
    BOOST_FAIL("parse_ladder_kernel accepted 'harris8'");
  } catch (const std::invalid_argument& e) {
    const std::string what = e.what();
    BOOST_TEST(what.find("harris8") != std::string::npos);
    BOOST_TEST(what.find("complete_unroll") != std::string::npos);
  }
  BOOST_CHECK_THROW(reduce::parse_ladder_kernel(""), std::invalid_argument);
  BOOST_CHECK_THROW(reduce::parse_ladder_kernel("Serial"), std::invalid_argument);  // names are exact
}

// The oracle the GPU cases trust, against sums worked out by hand.
CPU_TEST_CASE(oracle_matches_hand_computed_sums) {
  // In float, 1e8 + 1 rounds back to 1e8 (spacing 8 there), so a float loop gives 0.5; the oracle's
  // long double keeps the 1: exact sum 1.5, sum|x| = 2e8 + 1.5.
  const std::vector<float> f = {1e8f, 1.f, -1e8f, 0.5f};
  const auto o = test::oracle::sum(f);
  BOOST_TEST(static_cast<double>(o.sum) == 1.5);
  BOOST_TEST(static_cast<double>(o.abs_sum) == 2e8 + 1.5);
  // Integer wrap: INT32_MAX + 1 = INT32_MIN (mod 2^32); 3 + (-5) + 7 = 5.
  BOOST_TEST(test::oracle::wrapped_sum(std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::max(), 1}) ==
             std::numeric_limits<std::int32_t>::min());
  BOOST_TEST(test::oracle::wrapped_sum(std::vector<std::int32_t>{3, -5, 7}) == 5);
  BOOST_TEST(test::oracle::wrapped_sum(std::vector<std::int32_t>{}) == 0);
}

// The serial rung's algorithm, run on the CPU: float accumulation in index order (the example above
// gives 0.5, not the exact 1.5, which is within its gamma(n) bound), exact integer sums, n = 0.
CPU_TEST_CASE_TEMPLATE(serial_twin_matches_oracle, T, ladder_types) {
  std::uint64_t stream = 900;
  for (std::int64_t n : test::hostile_sizes()) {
    const std::vector<T> x = ladder_input<T>(n, ++stream);
    const T got = reduce::reference::ladder_serial_sum(x.data(), n);
    BOOST_TEST_CONTEXT("n = " << n) {
      if constexpr (std::is_floating_point_v<T>) {
        // n additions in a chain (the first adds to the exact identity): |error| <= gamma(n) sum|x|; with
        // mean-1/2 inputs that still rejects 0 (ladder_input), and exactly summable inputs must give ==.
        BOOST_TEST(ladder_rounded_ok(static_cast<double>(n), x, got));
        const std::vector<T> e = test::exactly_summable_vector<T>(n, stream + 5000);
        BOOST_TEST(ladder_exact_ok(e, reduce::reference::ladder_serial_sum(e.data(), n)));
      } else {
        BOOST_TEST(ladder_exact_ok(x, got));
      }
    }
  }
  if constexpr (std::is_same_v<T, float>) {
    const std::vector<float> f = {1e8f, 1.f, -1e8f, 0.5f};
    BOOST_TEST(reduce::reference::ladder_serial_sum(f.data(), 4) == 0.5f);
  }
  BOOST_CHECK_THROW(reduce::reference::ladder_serial_sum(static_cast<const T*>(nullptr), -1), std::invalid_argument);
}

CPU_TEST_CASE(workspace_size_grows_with_n_and_rejects_negative) {
  using ws = reduce::ladder_workspace;
  BOOST_TEST(ws::required_bytes(1 << 28) > ws::required_bytes(1 << 20));
  // first-pass partials of 2^28 elements at 256 per block: 2^20 slots of 8 bytes at least
  BOOST_TEST(ws::required_bytes(1 << 28) >= (std::size_t{1} << 20) * 8);
  BOOST_CHECK_THROW(ws::required_bytes(-1), std::invalid_argument);
}

// The checkers reject wrong results at every hostile size (issue 19: zero-mean inputs and gamma_T(n) let
// a rung returning 0 pass from n ~ 1e5 on). depth = n bounds every rung's k (ladder_error_depth <= n - 1
// for atomic_global, the longest), so the rounded checker is tested at its loosest.
CPU_TEST_CASE_TEMPLATE(wrong_ladder_sums_are_rejected, T, ladder_types) {
  std::uint64_t stream = 9000;
  for (std::int64_t n : test::hostile_sizes()) {
    if (n == 0) continue;
    BOOST_TEST_CONTEXT("n = " << n) {
      if constexpr (std::is_floating_point_v<T>) {
        const std::vector<T> x = ladder_input<T>(n, ++stream);
        BOOST_TEST(!ladder_rounded_ok(static_cast<double>(n), x, T(0)));
        BOOST_TEST(ladder_rounded_ok(static_cast<double>(n), x, static_cast<T>(test::oracle::sum(x).sum)));
      }
      std::vector<T> e;
      if constexpr (std::is_floating_point_v<T>) e = test::exactly_summable_vector<T>(n, ++stream);
      else e = ladder_input<T>(n, ++stream);
      const T right = exact_sum(e);
      BOOST_TEST(ladder_exact_ok(e, right));
      if (right != T(0)) BOOST_TEST(!ladder_exact_ok(e, T(0)));
      if (e.back() != T(0)) BOOST_TEST(!ladder_exact_ok(e, static_cast<T>(right - e.back())));  // last dropped
      BOOST_TEST(!ladder_exact_ok(e, static_cast<T>(right + T(1))));                             // one element + 1
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
