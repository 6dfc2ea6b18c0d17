// reduce::sum through both backends against the long-double oracle, on every hostile size.
#include <boost/mpl/list.hpp>

#include <cstdint>
#include <limits>
#include <vector>

#include "oracle.hpp"
#include "reduce_paths.hpp"
#include "gpukit/device_buffer.hpp"
#include "reduce/reduce.hpp"
#include "test_support.hpp"

namespace {

using all_types = boost::mpl::list<std::int32_t, std::int64_t, std::uint32_t, std::uint64_t, float, double>;

template <class T>
std::vector<T> sum_input(std::int64_t n, std::uint64_t stream) {
  // Small magnitudes keep integer sums free of overflow at every hostile size (|x| <= 1000, n < 2^22).
  // Floats: mean 1/2, so that |sum| ~ n/2 stays far above the error bound (test_support.hpp).
  if constexpr (std::is_floating_point_v<T>) return test::offset_vector<T>(n, stream);
  else if constexpr (std::is_signed_v<T>) return test::random_vector<T>(n, T(-1000), T(1000), stream);
  else return test::random_vector<T>(n, T(0), T(1000), stream);
}

// ---- the checkers (each is fed wrong results by wrong_sums_are_rejected below) ----

/// Rounded float sum: |got - exact| <= bound, with bound = sum_bound() of the path that ran.
template <class T>
boost::test_tools::predicate_result rounded_sum_ok(const std::vector<T>& x, double got, double bound) {
  return test::within_bound(got, test::oracle::sum(x).sum, bound);
}
/// The bound of the path that ran (derivations in reduce_paths.hpp): reference: gamma_double(n - 1)
/// sum|x| + u_T (|exact| + that); CUDA: gamma_T(k) sum|x|, k = reduce::single_pass_chain_length(n).
/// (It used to be gamma_T(n) sum|x| for every path: ~0.2 sum|x| at n = 3e6, which a 0 met.)
template <class T>
double sum_bound(test::path p, const std::vector<T>& x) {
  const auto o = test::oracle::sum(x);
  return test::reduction_bound<T>(p, static_cast<std::int64_t>(x.size()), o.abs_sum, o.sum);
}
/// Exactly summable inputs (test::exactly_summable_vector): every order gives the exact sum, so ==.
template <class T>
boost::test_tools::predicate_result exact_sum_ok(const std::vector<T>& x, T got) {
  const long double exact = test::oracle::sum(x).sum;
  if (static_cast<long double>(got) == exact) return true;
  boost::test_tools::predicate_result r(false);
  r.message() << "computed " << got << " vs exact " << static_cast<double>(exact) << " (every partial sum is exact)";
  return r;
}

using test::path;

template <class T>
T run_sum(path p, const std::vector<T>& x) {
  const auto n = static_cast<std::int64_t>(x.size());
  if (p == path::reference) return reduce::reference::sum(x.data(), n);
  gpukit::device_buffer<T> d(x);
  if (p == path::cuda_host_result) return reduce::sum(d.data(), n);
  gpukit::device_buffer<T> out(1);
  out.fill_bytes(test::poison_byte);
  if (p == path::cuda_workspace) {
    reduce::workspace ws;
    reduce::sum(d.data(), n, out.data(), ws);
    reduce::sum(d.data(), n, out.data(), ws);  // a second call on the same workspace must also be right
  } else {
    reduce::sum(d.data(), n, out.data());
  }
  return out.download()[0];
}

template <class T>
void check_sum_all_sizes(path p) {
  std::uint64_t stream = 0;
  for (std::int64_t n : test::hostile_sizes()) {
    const std::vector<T> x = sum_input<T>(n, ++stream);
    const T got = run_sum(p, x);
    BOOST_TEST_CONTEXT("n = " << n) {
      if constexpr (std::is_floating_point_v<T>) {
        BOOST_TEST(rounded_sum_ok(x, static_cast<double>(got), sum_bound(p, x)));
        const std::vector<T> e = test::exactly_summable_vector<T>(n, stream + 5000);
        BOOST_TEST(exact_sum_ok(e, run_sum(p, e)));
      } else {
        BOOST_TEST(got == test::oracle::wrapped_sum(x));  // integers: exact
      }
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(sum)

CPU_TEST_CASE_TEMPLATE(reference_matches_oracle, T, all_types) {
  check_sum_all_sizes<T>(path::reference);
}

GPU_TEST_CASE_TEMPLATE(cuda_matches_oracle, T, all_types) {
  check_sum_all_sizes<T>(path::cuda_host_result);
  check_sum_all_sizes<T>(path::cuda_device_result);
  check_sum_all_sizes<T>(path::cuda_workspace);
}

GPU_TEST_CASE(cuda_float_sum_is_run_to_run_deterministic) {
  const std::vector<float> x = test::random_vector<float>((1 << 22) + 3, -1.f, 1.f, 7);
  gpukit::device_buffer<float> d(x);
  const float first = reduce::sum(d.data(), d.size());
  for (int run = 0; run < 20; ++run) BOOST_TEST(reduce::sum(d.data(), d.size()) == first);
}

CPU_TEST_CASE(negative_count_is_rejected) {
  const float x = 1.f;
  BOOST_CHECK_THROW(reduce::reference::sum(&x, -1), std::invalid_argument);
}

// Only meaningful where there is no device: checks the no-GPU error path and the noted fallback.
BOOST_AUTO_TEST_CASE(cuda_without_device_is_reported,
                     *boost::unit_test::label("cpu") *
                         boost::unit_test::precondition([](boost::unit_test::test_unit_id) {
                           boost::test_tools::assertion_result r(!reduce::cuda_device_available());
                           if (!r) r.message() << "a CUDA device is present";
                           return r;
                         })) {
  BOOST_CHECK_THROW(reduce::select_backend(reduce::device_choice::cuda), gpukit::no_cuda_device);
  BOOST_TEST((reduce::select_backend(reduce::device_choice::automatic) == reduce::backend::cpu));
  BOOST_TEST(!reduce::cuda_unavailable_reason().empty());
}

CPU_TEST_CASE(device_choice_parses) {
  BOOST_TEST((reduce::parse_device_choice("auto") == reduce::device_choice::automatic));
  BOOST_TEST((reduce::parse_device_choice("cpu") == reduce::device_choice::cpu));
  BOOST_TEST((reduce::parse_device_choice("cuda") == reduce::device_choice::cuda));
  BOOST_CHECK_THROW(reduce::parse_device_choice("gpu"), std::invalid_argument);
}

// ---- the checkers reject wrong results (issue 19: with gamma_T(n) sum|x| and zero-mean inputs a kernel
// returning 0 passed from n ~ 1e5 on) ----

/// An upper bound on the CUDA chain k on ANY device, so that a CPU case can use it. single_pass_chain_length
/// is chain_length(n, grid, threads, unroll, vec) (+ max_grid / threads) with threads >= 256, unroll <= 8,
/// vec <= 4 (dispatch.cuh) and grid >= 1: per-thread <= n / threads + unroll vec + 2 <= n / 256 + 34, the
/// block tree 2 log2(512) = 18, the last block's partials <= 4096 / 256 + 1, plus 4096 / 256: <= n / 256 + 85.
/// n / 64 + 256 leaves room for smaller blocks; the GPU case below checks it against the real k.
double cuda_chain_upper_bound(std::int64_t n) { return static_cast<double>(n) / 64 + 256; }

GPU_TEST_CASE(cuda_chain_upper_bound_holds_on_this_device) {
  for (std::int64_t n : test::hostile_sizes()) {
    BOOST_TEST_CONTEXT("n = " << n) {
      BOOST_TEST(static_cast<double>(reduce::single_pass_chain_length(n, sizeof(float))) <= cuda_chain_upper_bound(n));
      BOOST_TEST(static_cast<double>(reduce::single_pass_chain_length(n, sizeof(double))) <= cuda_chain_upper_bound(n));
    }
  }
}

template <class T>
void check_wrong_sums_are_rejected() {
  bool old_bound_accepted_zero = false;
  std::uint64_t stream = 7000;
  for (std::int64_t n : test::hostile_sizes()) {
    if (n == 0) continue;
    BOOST_TEST_CONTEXT("n = " << n) {
      // Rounded inputs, both bounds (reference, and CUDA with k at its largest on any device): 0 is wrong
      // by |sum| ~ n/2, above gamma(k) sum|x| ~ gamma(k) 5n/8 for every k here (gamma_T(k) < 0.8).
      const std::vector<T> x = sum_input<T>(n, ++stream);
      const auto o = test::oracle::sum(x);
      const double ref_bound = sum_bound(path::reference, x);
      const double cuda_bound = test::gamma<T>(cuda_chain_upper_bound(n)) * static_cast<double>(o.abs_sum);
      BOOST_TEST(!rounded_sum_ok(x, 0.0, ref_bound));
      BOOST_TEST(!rounded_sum_ok(x, 0.0, cuda_bound));
      // The right answer passes both (so the rejections above are the checker's, not a broken bound).
      BOOST_TEST(rounded_sum_ok(x, static_cast<double>(o.sum), ref_bound));
      BOOST_TEST(rounded_sum_ok(x, static_cast<double>(o.sum), cuda_bound));

      // Exactly summable inputs: 0, the sum without the last element, one element perturbed by 1, and
      // one element counted twice are all rejected at every size, and the exact sum is accepted.
      const std::vector<T> e = test::exactly_summable_vector<T>(n, ++stream);
      const auto exact = static_cast<T>(test::oracle::sum(e).sum);
      BOOST_TEST(exact_sum_ok(e, exact));
      if (exact != T(0)) BOOST_TEST(!exact_sum_ok(e, T(0)));
      BOOST_TEST(!exact_sum_ok(e, static_cast<T>(exact - e.back())));    // dropped the last element
      BOOST_TEST(!exact_sum_ok(e, static_cast<T>(exact + T(1))));        // e[n / 2] + 1 instead of e[n / 2]
      BOOST_TEST(!exact_sum_ok(e, static_cast<T>(exact + e.back())));    // the last element twice

      // The old check (zero-mean inputs, gamma_T(n) sum|x|) accepted 0 at large n.
      const std::vector<T> z = test::random_vector<T>(n, T(-1), T(1), stream + 100);
      const auto oz = test::oracle::sum(z);
      old_bound_accepted_zero = old_bound_accepted_zero ||
                                rounded_sum_ok(z, 0.0, test::gamma<T>(static_cast<double>(n)) * static_cast<double>(oz.abs_sum));
    }
  }
  if constexpr (std::is_same_v<T, float>) BOOST_TEST(old_bound_accepted_zero);  // what this test fixes
}

CPU_TEST_CASE(wrong_float_sums_are_rejected) { check_wrong_sums_are_rejected<float>(); }
CPU_TEST_CASE(wrong_double_sums_are_rejected) { check_wrong_sums_are_rejected<double>(); }

BOOST_AUTO_TEST_SUITE_END()
