// min, max, argmin, argmax, sum_of_squares, norm2, dot, count_nonzero, count_nan through both
// backends (every path) against the long-double oracle, on every hostile size.
#include <boost/mpl/list.hpp>

#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "oracle.hpp"
#include "reduce_paths.hpp"

namespace {

using all_types = boost::mpl::list<std::int32_t, std::int64_t, std::uint32_t, std::uint64_t, float, double>;
using float_types = boost::mpl::list<float, double>;

template <class T>
std::vector<T> input(std::int64_t n, std::uint64_t stream) {
  // |x| <= 1000: integer sums of squares stay far from overflow in 64 bits and wrap predictably in 32.
  if constexpr (std::is_floating_point_v<T>) return test::random_vector<T>(n, T(-1), T(1), stream);
  else if constexpr (std::is_signed_v<T>) return test::random_vector<T>(n, T(-1000), T(1000), stream);
  else return test::random_vector<T>(n, T(0), T(1000), stream);
}

/// Few distinct values (0..7, signed -3..4): ties everywhere, so argmin/argmax must pick the FIRST.
template <class T>
std::vector<T> tied_input(std::int64_t n, std::uint64_t stream) {
  const auto k = test::random_vector<std::int64_t>(n, 0, 7, stream);
  std::vector<T> x(k.size());
  for (std::size_t i = 0; i < k.size(); ++i) x[i] = static_cast<T>(std::is_signed_v<T> ? k[i] - 3 : k[i]);
  return x;
}

#define REDUCE_PATH_LAMBDAS(NAME)                                                               \
  [](const T* in_, std::int64_t n_) { return reduce::reference::NAME(in_, n_); },              \
      [](const T* in_, std::int64_t n_) { return reduce::NAME(in_, n_); },                    \
      [](const T* in_, std::int64_t n_, auto* o_) { reduce::NAME(in_, n_, o_); },              \
      [](const T* in_, std::int64_t n_, auto* o_, reduce::workspace& ws_) { reduce::NAME(in_, n_, o_, ws_); }

template <class T>
void check_min_max(test::path p) {
  std::uint64_t stream = 100;
  for (std::int64_t n : test::hostile_sizes()) {
    for (bool tied : {false, true}) {
      const std::vector<T> x = tied ? tied_input<T>(n, ++stream) : input<T>(n, ++stream);
      BOOST_TEST_CONTEXT(test::to_string(p) << ", n = " << n << (tied ? ", tied values" : "")) {
        const auto lo = test::oracle::arg_extremum<T, false>(x);
        const auto hi = test::oracle::arg_extremum<T, true>(x);
        // Exact operators: bitwise equal results, and the first index of the extremum.
        BOOST_TEST(test::run_path<T>(p, x, REDUCE_PATH_LAMBDAS(min)) == lo.value);
        BOOST_TEST(test::run_path<T>(p, x, REDUCE_PATH_LAMBDAS(max)) == hi.value);
        const auto amin = test::run_path<reduce::value_index<T>>(p, x, REDUCE_PATH_LAMBDAS(argmin));
        const auto amax = test::run_path<reduce::value_index<T>>(p, x, REDUCE_PATH_LAMBDAS(argmax));
        BOOST_TEST(amin.value == lo.value);
        BOOST_TEST(amin.index == lo.index);
        BOOST_TEST(amax.value == hi.value);
        BOOST_TEST(amax.index == hi.index);
      }
    }
  }
}

template <class T>
void check_squares_and_counts(test::path p) {
  std::uint64_t stream = 200;
  for (std::int64_t n : test::hostile_sizes()) {
    std::vector<T> x = input<T>(n, ++stream);
    for (std::size_t i = 0; i < x.size(); i += 3) x[i] = T(0);  // zeros for count_nonzero
    BOOST_TEST_CONTEXT(test::to_string(p) << ", n = " << n) {
      const T ss = test::run_path<T>(p, x, REDUCE_PATH_LAMBDAS(sum_of_squares));
      if constexpr (std::is_floating_point_v<T>) {
        // Each square adds one rounding to the chain: CUDA |error| <= gamma_T(k + 1) sum x_i^2; the reference
        // squares and sums in double, then rounds once (reduction_bound in reduce_paths.hpp derives both).
        // All terms are >= 0, so sum x_i^2 = |exact| and 0 (or a dropped term) violates the bound.
        const auto o = test::oracle::sum_of_squares(x);
        const double bound = test::reduction_bound<T>(p, n, o.abs_sum, o.sum, 1);
        BOOST_TEST(test::within_bound(static_cast<double>(ss), o.sum, bound));
      } else {
        BOOST_TEST(ss == test::oracle::wrapped_dot(x, x));  // integers: exact modulo 2^bits
      }
      std::int64_t nonzero = 0;
      for (T v : x) nonzero += v != T(0);
      BOOST_TEST(test::run_path<std::int64_t>(p, x, REDUCE_PATH_LAMBDAS(count_nonzero)) == nonzero);
    }
  }
}

template <class T>
void check_norm2_and_nan_count(test::path p) {
  std::uint64_t stream = 300;
  for (std::int64_t n : test::hostile_sizes()) {
    std::vector<T> x = input<T>(n, ++stream);
    BOOST_TEST_CONTEXT(test::to_string(p) << ", n = " << n) {
      const T nrm = test::run_path<T>(p, x, REDUCE_PATH_LAMBDAS(norm2));
      // Accumulated in double: relative error of the sum of squares <= gamma_double(k + 1); the sqrt
      // halves it and adds one double rounding; the conversion to T adds u_T. So
      // |norm - exact| <= (gamma_double(k + 1) / 2 + u_double + u_T) * exact; doubled for slack-free safety
      // of the sqrt's derivative bound.
      const long double exact = std::sqrt(test::oracle::sum_of_squares(x).sum);
      const double bound = 2.0 * (test::gamma<double>(test::chain<T>(p, n) + 1) / 2 + test::unit_roundoff<double>() +
                                  test::unit_roundoff<T>()) * static_cast<double>(exact);
      BOOST_TEST(test::within_bound(static_cast<double>(nrm), exact, bound));
      std::int64_t nans = 0;
      for (std::size_t i = 7; i < x.size(); i += 1001, ++nans) x[i] = std::numeric_limits<T>::quiet_NaN();
      BOOST_TEST(test::run_path<std::int64_t>(p, x, REDUCE_PATH_LAMBDAS(count_nan)) == nans);
    }
  }
}

/// dot's inputs: floats with mean 1/2 (test::offset_vector), so that |x . y| ~ n/4 stays far above the
/// error bound at every hostile size; integers as input().
template <class T>
std::vector<T> dot_input(std::int64_t n, std::uint64_t stream) {
  if constexpr (std::is_floating_point_v<T>) return test::offset_vector<T>(n, stream);
  else return input<T>(n, stream);
}

template <class T>
T run_dot(test::path p, const std::vector<T>& x, const std::vector<T>& y, std::int64_t y_offset = 0) {
  const auto n = static_cast<std::int64_t>(x.size());
  if (p == test::path::reference) return reduce::reference::dot(x.data(), y.data() + y_offset, n);
  gpukit::device_buffer<T> dx(x), dy(y);
  if (p == test::path::cuda_host_result) return reduce::dot(dx.data(), dy.data() + y_offset, n);
  gpukit::device_buffer<T> out(1);
  out.fill_bytes(test::poison_byte);
  if (p == test::path::cuda_workspace) {
    reduce::workspace ws;
    reduce::dot(dx.data(), dy.data() + y_offset, n, out.data(), ws);
  } else {
    reduce::dot(dx.data(), dy.data() + y_offset, n, out.data());
  }
  return out.download()[0];
}

template <class T>
void check_dot(test::path p) {
  std::uint64_t stream = 400;
  for (std::int64_t n : test::hostile_sizes()) {
    const std::vector<T> x = dot_input<T>(n, ++stream);
    // y one element longer: y + 1 is a view whose 16-byte misalignment differs from x's, which takes
    // the element-load path of the kernel.
    const std::vector<T> y = dot_input<T>(n + 1, ++stream);
    for (std::int64_t off : {0, 1}) {
      const std::vector<T> yv(y.begin() + off, y.begin() + off + n);
      const T got = run_dot(p, x, y, off);
      BOOST_TEST_CONTEXT(test::to_string(p) << ", n = " << n << ", y offset " << off) {
        if constexpr (std::is_floating_point_v<T>) {
          // One product rounding (or none with fma) plus the sum chain: CUDA gamma_T(k + 1) sum |x_i y_i|;
          // the reference forms and sums the products in double, then rounds once (reduction_bound). The old
          // gamma_T(n) sum|x_i y_i| ~ 0.2 n / 4 at n = 3e6 held a zero-mean dot (~ sqrt(n) / 3) and 0 alike;
          // x has mean 1/2 (dot_input), so |dot| ~ n/4 against sum|x_i y_i| ~ 5n/16.
          const auto o = test::oracle::dot(x, yv);
          const double bound = test::reduction_bound<T>(p, n, o.abs_sum, o.sum, 1);
          BOOST_TEST(test::within_bound(static_cast<double>(got), o.sum, bound));
        } else {
          BOOST_TEST(got == test::oracle::wrapped_dot(x, yv));
        }
      }
    }
  }
}

template <class T>
void check_nan_and_inf(test::path p) {
  const T nan = std::numeric_limits<T>::quiet_NaN();
  const T inf = std::numeric_limits<T>::infinity();
  for (std::int64_t n : {std::int64_t{3}, std::int64_t{4097}, std::int64_t{100003}}) {
    std::vector<T> x = input<T>(n, 500 + static_cast<std::uint64_t>(n));
    BOOST_TEST_CONTEXT(test::to_string(p) << ", n = " << n) {
      std::vector<T> with_nan = x;
      with_nan[static_cast<std::size_t>(n / 2)] = nan;
      with_nan[static_cast<std::size_t>(n - 1)] = nan;
      // min/max/argmin/argmax: NaN propagates; arg* give the FIRST NaN.
      BOOST_TEST(std::isnan(test::run_path<T>(p, with_nan, REDUCE_PATH_LAMBDAS(min))));
      BOOST_TEST(std::isnan(test::run_path<T>(p, with_nan, REDUCE_PATH_LAMBDAS(max))));
      const auto amin = test::run_path<reduce::value_index<T>>(p, with_nan, REDUCE_PATH_LAMBDAS(argmin));
      const auto amax = test::run_path<reduce::value_index<T>>(p, with_nan, REDUCE_PATH_LAMBDAS(argmax));
      BOOST_TEST(std::isnan(amin.value));
      BOOST_TEST(amin.index == n / 2);
      BOOST_TEST(std::isnan(amax.value));
      BOOST_TEST(amax.index == n / 2);
      BOOST_TEST(std::isnan(test::run_path<T>(p, with_nan, REDUCE_PATH_LAMBDAS(sum_of_squares))));
      // Infinities: the extremum is the infinity, at its first position.
      std::vector<T> with_inf = x;
      with_inf[1] = -inf;
      with_inf[static_cast<std::size_t>(n - 1)] = inf;
      BOOST_TEST(test::run_path<T>(p, with_inf, REDUCE_PATH_LAMBDAS(min)) == -inf);
      BOOST_TEST(test::run_path<T>(p, with_inf, REDUCE_PATH_LAMBDAS(max)) == inf);
      BOOST_TEST(test::run_path<reduce::value_index<T>>(p, with_inf, REDUCE_PATH_LAMBDAS(argmax)).index == n - 1);
      BOOST_TEST(test::run_path<T>(p, with_inf, REDUCE_PATH_LAMBDAS(norm2)) == inf);
    }
  }
}

template <class T>
void check_empty(test::path p) {
  const std::vector<T> none;
  BOOST_TEST_CONTEXT(test::to_string(p)) {
    const auto amin = test::run_path<reduce::value_index<T>>(p, none, REDUCE_PATH_LAMBDAS(argmin));
    const auto amax = test::run_path<reduce::value_index<T>>(p, none, REDUCE_PATH_LAMBDAS(argmax));
    BOOST_TEST(amin.index == -1);
    BOOST_TEST(amax.index == -1);
    const T lo = test::oracle::arg_extremum<T, false>(none).value;
    const T hi = test::oracle::arg_extremum<T, true>(none).value;
    BOOST_TEST(amin.value == lo);
    BOOST_TEST(amax.value == hi);
    BOOST_TEST(test::run_path<std::int64_t>(p, none, REDUCE_PATH_LAMBDAS(count_nonzero)) == 0);
  }
}

/// argmin/argmax on patterns that a per-tile fast path could get wrong: NaN clusters inside one
/// thread's tile (the first NaN wins), equal extrema a few elements apart (the first index wins), and
/// inputs made only of the identity's value (+-inf, lowest/max: index 0, not -1). Sizes: one block,
/// the medium grid, and (2^22 + 5) past 16 MiB for every type, the large shape (a wave of 512-thread
/// blocks for these reducers, whose last block collects hundreds of partials).
template <class T>
void check_arg_patterns(test::path p) {
  using lim = std::numeric_limits<T>;
  const T low = lim::has_infinity ? -lim::infinity() : lim::lowest();
  const T high = lim::has_infinity ? lim::infinity() : lim::max();
  for (std::int64_t n : {std::int64_t{5000}, std::int64_t{40003}, (std::int64_t{1} << 20) + 5, (std::int64_t{1} << 22) + 5}) {
    std::vector<std::vector<T>> cases;
    cases.push_back(std::vector<T>(static_cast<std::size_t>(n), low));
    cases.push_back(std::vector<T>(static_cast<std::size_t>(n), high));
    std::vector<T> ties = input<T>(n, 900 + static_cast<std::uint64_t>(n));
    for (std::int64_t q : {n / 3 + 1, n / 3 + 2, n / 3 + 7, n / 3 + 1024, n - 1}) {
      ties[static_cast<std::size_t>(q)] = T(2000);  // above every input value
      ties[static_cast<std::size_t>(q - 1 - n / 5)] = lim::is_signed ? T(-2000) : T(0);
    }
    cases.push_back(ties);
    if constexpr (lim::has_quiet_NaN) {
      std::vector<T> nans = input<T>(n, 950 + static_cast<std::uint64_t>(n));
      for (std::int64_t q : {n / 2 + 3, n / 2 + 1, n / 2 + 2, n / 2 + 17, n / 2 + 4096 < n ? n / 2 + 4096 : n - 1})
        nans[static_cast<std::size_t>(q)] = lim::quiet_NaN();
      nans[static_cast<std::size_t>(n / 2)] = T(5);  // an extremum just before the NaNs
      cases.push_back(nans);
    }
    for (std::size_t c = 0; c < cases.size(); ++c) {
      const auto& x = cases[c];
      BOOST_TEST_CONTEXT(test::to_string(p) << ", n = " << n << ", pattern " << c) {
        const auto lo = test::oracle::arg_extremum<T, false>(x);
        const auto hi = test::oracle::arg_extremum<T, true>(x);
        const auto amin = test::run_path<reduce::value_index<T>>(p, x, REDUCE_PATH_LAMBDAS(argmin));
        const auto amax = test::run_path<reduce::value_index<T>>(p, x, REDUCE_PATH_LAMBDAS(argmax));
        BOOST_TEST(amin.index == lo.index);
        BOOST_TEST(amax.index == hi.index);
        BOOST_TEST((amin.value == lo.value || (lo.value != lo.value && amin.value != amin.value)));
        BOOST_TEST((amax.value == hi.value || (hi.value != hi.value && amax.value != amax.value)));
        const T mn = test::run_path<T>(p, x, REDUCE_PATH_LAMBDAS(min));
        const T mx = test::run_path<T>(p, x, REDUCE_PATH_LAMBDAS(max));
        BOOST_TEST((mn == lo.value || (lo.value != lo.value && mn != mn)));
        BOOST_TEST((mx == hi.value || (hi.value != hi.value && mx != mx)));
      }
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(ops)

CPU_TEST_CASE_TEMPLATE(reference_arg_patterns_match_oracle, T, all_types) {
  check_arg_patterns<T>(test::path::reference);
}
GPU_TEST_CASE_TEMPLATE(cuda_arg_patterns_match_oracle, T, all_types) {
  for (auto p : test::cuda_paths) check_arg_patterns<T>(p);
}

CPU_TEST_CASE_TEMPLATE(reference_min_max_arg_match_oracle, T, all_types) { check_min_max<T>(test::path::reference); }
GPU_TEST_CASE_TEMPLATE(cuda_min_max_arg_match_oracle, T, all_types) {
  for (auto p : test::cuda_paths) check_min_max<T>(p);
}

CPU_TEST_CASE_TEMPLATE(reference_squares_and_counts_match_oracle, T, all_types) {
  check_squares_and_counts<T>(test::path::reference);
}
GPU_TEST_CASE_TEMPLATE(cuda_squares_and_counts_match_oracle, T, all_types) {
  for (auto p : test::cuda_paths) check_squares_and_counts<T>(p);
}

CPU_TEST_CASE_TEMPLATE(reference_norm2_and_nan_count_match_oracle, T, float_types) {
  check_norm2_and_nan_count<T>(test::path::reference);
}
GPU_TEST_CASE_TEMPLATE(cuda_norm2_and_nan_count_match_oracle, T, float_types) {
  for (auto p : test::cuda_paths) check_norm2_and_nan_count<T>(p);
}

CPU_TEST_CASE_TEMPLATE(reference_dot_matches_oracle, T, all_types) { check_dot<T>(test::path::reference); }
GPU_TEST_CASE_TEMPLATE(cuda_dot_matches_oracle, T, all_types) {
  for (auto p : test::cuda_paths) check_dot<T>(p);
}

CPU_TEST_CASE_TEMPLATE(reference_nan_and_inf_propagate, T, float_types) { check_nan_and_inf<T>(test::path::reference); }
GPU_TEST_CASE_TEMPLATE(cuda_nan_and_inf_propagate, T, float_types) {
  for (auto p : test::cuda_paths) check_nan_and_inf<T>(p);
}

CPU_TEST_CASE_TEMPLATE(reference_empty_input_gives_identity, T, all_types) { check_empty<T>(test::path::reference); }
GPU_TEST_CASE_TEMPLATE(cuda_empty_input_gives_identity, T, all_types) {
  for (auto p : test::cuda_paths) check_empty<T>(p);
}

BOOST_AUTO_TEST_SUITE_END()
