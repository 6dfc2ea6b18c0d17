// reduce::sum through both backends against the long-double oracle, on every hostile size.
#include <boost/mpl/list.hpp>

#include <cstdint>
#include <vector>

#include "oracle.hpp"
#include "gpukit/device_buffer.hpp"
#include "reduce/reduce.hpp"
#include "test_support.hpp"

namespace {

using all_types = boost::mpl::list<std::int32_t, std::int64_t, std::uint32_t, std::uint64_t, float, double>;

template <class T>
std::vector<T> sum_input(std::int64_t n, std::uint64_t stream) {
  // Small magnitudes keep integer sums free of overflow at every hostile size (|x| <= 1000, n < 2^22).
  if constexpr (std::is_floating_point_v<T>) return test::random_vector<T>(n, T(-1), T(1), stream);
  else if constexpr (std::is_signed_v<T>) return test::random_vector<T>(n, T(-1000), T(1000), stream);
  else return test::random_vector<T>(n, T(0), T(1000), stream);
}

enum class path { reference, cuda_host_result, cuda_device_result, cuda_workspace };

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
        // Any summation order: |error| <= gamma(n - 1) * sum|x| (test_support.hpp); the reference
        // accumulates in double, so its bound is the double gamma plus one rounding to T.
        const auto o = test::oracle::sum(x);
        const double order_bound = test::gamma<T>(static_cast<double>(n)) * static_cast<double>(o.abs_sum);
        BOOST_TEST(test::within_bound(static_cast<double>(got), o.sum, order_bound));
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

BOOST_AUTO_TEST_SUITE_END()
