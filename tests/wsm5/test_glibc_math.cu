// wsm5::glibc::expf, logf and powf (libwsm5/src/glibc_float_math.hpp) against the host's libm, on the
// argument ranges the scheme uses: the saturation exponents ([-25, 3] and beyond), T_r = T_tp / T (T from
// 100 to 700 K) and the constant-exponent powers of the rates. Where the host's libm is glibc the results
// must be its bits, on the CPU (the header's host path) and on the GPU (its device path, built as the
// CUDA variants are: -fmad=false). Everywhere they must be within the documented ulp bounds of a long
// double oracle. CUDA's own expf, logf and powf on the same arguments differ from glibc's, which shows
// the comparison can fail.
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <vector>

#include "glibc_float_math.hpp"
#include "gpukit/cuda_check.hpp"
#include "gpukit/device_buffer.hpp"
#include "test_support.hpp"

namespace {

constexpr float pow_exponents[] = {7.f / 3.f, 1.31f, 1.33f};

/// n floats evenly spaced in bit pattern over [lo, hi] (0 < lo < hi or lo < hi < 0: monotone bits).
std::vector<float> spaced(float lo, float hi, std::size_t n) {
  std::uint32_t a = wsm5::glibc::bits_of(lo), b = wsm5::glibc::bits_of(hi);
  if (a > b) std::swap(a, b);
  std::vector<float> x(n);
  for (std::size_t i = 0; i < n; ++i)
    x[i] = wsm5::glibc::float_of(a + static_cast<std::uint32_t>((static_cast<std::uint64_t>(b - a) * i) / (n - 1)));
  return x;
}
/// The exp arguments: both signs, [-40, -2^-20] and [2^-20, 10], and 0.
std::vector<float> exp_args() {
  std::vector<float> x = spaced(-40.f, -0x1p-20f, 1u << 21), y = spaced(0x1p-20f, 10.f, 1u << 20);
  x.insert(x.end(), y.begin(), y.end());
  x.push_back(0.f);
  return x;
}
std::vector<float> log_args() { return spaced(0.1f, 8.f, 1u << 21); }
std::vector<float> pow_args() { return spaced(1e-12f, 1e9f, 1u << 20); }

/// |got - exact| in units of the float ulp at exact.
double ulps(float got, long double exact) {
  const float e = static_cast<float>(exact);
  const double ulp = std::nextafter(std::fabs(e), std::numeric_limits<float>::infinity()) - std::fabs(e);
  return static_cast<double>(std::fabs(static_cast<long double>(got) - exact) / ulp);
}

/// got moved one ulp further from exact: at least 1 ulp from it, which every bound below must reject.
float one_ulp_away(float got, long double exact) {
  return std::nextafter(got, static_cast<long double>(got) >= exact ? std::numeric_limits<float>::infinity()
                                                                     : -std::numeric_limits<float>::infinity());
}

__global__ void evaluate(const float* x, std::int64_t n, int fn, float b, float* ours, float* cudas) {
  const std::int64_t i = blockIdx.x * static_cast<std::int64_t>(blockDim.x) + threadIdx.x;
  if (i >= n) return;
  if (fn == 0) {
    ours[i] = wsm5::glibc::expf(x[i]);
    cudas[i] = ::expf(x[i]);
  } else if (fn == 1) {
    ours[i] = wsm5::glibc::logf(x[i]);
    cudas[i] = ::logf(x[i]);
  } else {
    ours[i] = wsm5::glibc::powf(x[i], b);
    cudas[i] = ::powf(x[i], b);
  }
}

struct device_results {
  std::vector<float> ours, cudas;
};
device_results on_gpu(const std::vector<float>& x, int fn, float b) {
  const auto n = static_cast<std::int64_t>(x.size());
  gpukit::device_buffer<float> dx(x), ours(x.size()), cudas(x.size());
  ours.fill_bytes(0xff);  // poison: NaN
  cudas.fill_bytes(0xff);
  evaluate<<<static_cast<unsigned>((n + 255) / 256), 256>>>(dx.data(), n, fn, b, ours.data(), cudas.data());
  GPUKIT_CHECK_LAUNCH();
  device_results r{std::vector<float>(x.size()), std::vector<float>(x.size())};
  gpukit::copy_to_host(r.ours.data(), ours.data(), x.size() * sizeof(float));
  gpukit::copy_to_host(r.cudas.data(), cudas.data(), x.size() * sizeof(float));
  return r;
}

bool same_bits(float a, float b) { return wsm5::glibc::bits_of(a) == wsm5::glibc::bits_of(b); }

#if defined(__GLIBC__)
constexpr bool host_libm_is_glibc = true;
#else
constexpr bool host_libm_is_glibc = false;
#endif

}  // namespace

BOOST_AUTO_TEST_SUITE(wsm5_glibc_math)

CPU_TEST_CASE(host_path_within_the_documented_ulp_bounds) {
  // glibc's documented worst cases: expf 0.502 ulp, logf and powf 0.82 ulp (of the exact value).
  double worst_exp = 0, worst_log = 0, worst_pow = 0;
  for (float x : exp_args()) worst_exp = std::max(worst_exp, ulps(wsm5::glibc::expf(x), std::exp(static_cast<long double>(x))));
  for (float x : log_args()) worst_log = std::max(worst_log, ulps(wsm5::glibc::logf(x), std::log(static_cast<long double>(x))));
  for (float b : pow_exponents)
    for (float x : pow_args())
      worst_pow = std::max(worst_pow, ulps(wsm5::glibc::powf(x, b), std::pow(static_cast<long double>(x), static_cast<long double>(b))));
  BOOST_TEST_MESSAGE("worst ulps: expf " << worst_exp << ", logf " << worst_log << ", powf " << worst_pow);
  BOOST_TEST(worst_exp <= 0.502);
  BOOST_TEST(worst_log <= 0.82);
  BOOST_TEST(worst_pow <= 0.82);
  // Each bound rejects a result one ulp further from the exact value.
  for (float x : {-17.3f, 1.5f}) {
    const long double e = std::exp(static_cast<long double>(x));
    BOOST_TEST(ulps(one_ulp_away(wsm5::glibc::expf(x), e), e) > 0.502);
  }
  for (float x : {0.37f, 1.5f, 3.f}) {
    const long double l = std::log(static_cast<long double>(x));
    BOOST_TEST(ulps(one_ulp_away(wsm5::glibc::logf(x), l), l) > 0.82);
  }
  for (float x : {5e-4f, 2.f}) {
    const long double q = std::pow(static_cast<long double>(x), static_cast<long double>(pow_exponents[0]));
    BOOST_TEST(ulps(one_ulp_away(wsm5::glibc::powf(x, pow_exponents[0]), q), q) > 0.82);
  }
}

CPU_TEST_CASE(host_path_is_the_host_glibc_bitwise) {
  if (!host_libm_is_glibc) {
    BOOST_TEST_MESSAGE("the host's libm is not glibc: nothing to compare bitwise");
    return;
  }
  std::int64_t differ = 0;
  for (float x : exp_args()) differ += !same_bits(wsm5::glibc::expf(x), ::expf(x));
  for (float x : log_args()) differ += !same_bits(wsm5::glibc::logf(x), ::logf(x));
  for (float b : pow_exponents)
    for (float x : pow_args()) differ += !same_bits(wsm5::glibc::powf(x, b), ::powf(x, b));
  BOOST_TEST(differ == 0);
  // Outside powf's domain it answers NaN, never glibc's value: the comparison sees that.
  BOOST_TEST(!same_bits(wsm5::glibc::powf(-2.f, 1.31f), ::powf(-2.f, 1.31f)));
}

GPU_TEST_CASE(device_path_is_the_host_libm_bitwise_and_cuda_libm_is_not) {
  std::int64_t ours_differ = 0, cuda_differ = 0, count = 0;
  const auto compare = [&](const std::vector<float>& x, int fn, float b) {
    const device_results r = on_gpu(x, fn, b);
    for (std::size_t i = 0; i < x.size(); ++i) {
      const float host = fn == 0 ? ::expf(x[i]) : fn == 1 ? ::logf(x[i]) : ::powf(x[i], b);
      const float header_host_path = fn == 0 ? wsm5::glibc::expf(x[i]) : fn == 1 ? wsm5::glibc::logf(x[i]) : wsm5::glibc::powf(x[i], b);
      // Where the host is not glibc, the device must still give the header's host path's bits.
      const float want = host_libm_is_glibc ? host : header_host_path;
      ours_differ += !same_bits(r.ours[i], want);
      cuda_differ += !same_bits(r.cudas[i], want);
      ++count;
    }
  };
  compare(exp_args(), 0, 0.f);
  compare(log_args(), 1, 0.f);
  for (float b : pow_exponents) compare(pow_args(), 2, b);
  BOOST_TEST_MESSAGE(count << " arguments: the device's glibc forms differ on " << ours_differ << ", CUDA's libm on "
                           << cuda_differ);
  BOOST_TEST(ours_differ == 0);
  BOOST_TEST(cuda_differ > 0);
}

BOOST_AUTO_TEST_SUITE_END()
