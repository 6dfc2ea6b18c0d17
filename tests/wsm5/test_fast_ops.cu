// phys::div_normal and phys::sqrt_normal (libwsm5/src/physics.hpp) against the plain `/` and sqrtf they
// replace, built as the CUDA variants are (-prec-div=false -prec-sqrt=false -fmad=false with
// WSM5_GPU_APPROX_DIV_SQRT; tests/wsm5/CMakeLists.txt): bitwise the same quotient for every finite a and
// normal b below 2^126, the same root for every normal x. Outside that precondition (a subnormal divisor or
// argument) they differ, which the last case shows, so the comparison can fail.
#include <cstdint>
#include <vector>

#include "gpukit/cuda_check.hpp"
#include "gpukit/device_buffer.hpp"
#include "physics.hpp"
#include "test_support.hpp"

namespace {

__device__ std::uint32_t mix(std::uint64_t x) {  // splitmix64's finaliser
  x ^= x >> 33;
  x *= 0xff51afd7ed558ccdULL;
  x ^= x >> 33;
  x *= 0xc4ceb9fe1a85ec53ULL;
  x ^= x >> 33;
  return static_cast<std::uint32_t>(x);
}
using wsm5::glibc::bits_of;
using wsm5::glibc::float_of;

// counts[0]: quotients that differ, counts[1]: roots that differ. a: any finite float; b: a random
// sign and mantissa with the exponent field in [e_lo, e_hi] (1..252: normal and below 2^126).
__global__ void compare_kernel(std::uint64_t seed, std::uint32_t e_lo, std::uint32_t e_hi,
                               unsigned long long* counts) {
  const std::uint64_t i = blockIdx.x * static_cast<std::uint64_t>(blockDim.x) + threadIdx.x;
  std::uint32_t ua = mix(seed * 0x9E3779B97F4A7C15ULL + 2 * i), ub = mix(seed * 0x9E3779B97F4A7C15ULL + 2 * i + 1);
  if (((ua >> 23) & 0xffu) == 0xffu) ua &= ~(1u << 30);  // no Inf or NaN
  const std::uint32_t e = e_lo + ((ub >> 23) & 0xffu) % (e_hi - e_lo + 1);
  ub = (ub & 0x807fffffu) | (e << 23);
  const float a = float_of(ua), b = float_of(ub), x = fabsf(b);
  if (bits_of(wsm5::phys::div_normal(a, b)) != bits_of(a / b)) atomicAdd(&counts[0], 1ULL);
  if (bits_of(wsm5::phys::sqrt_normal(x)) != bits_of(::sqrtf(x))) atomicAdd(&counts[1], 1ULL);
}

std::vector<unsigned long long> mismatches(std::uint32_t e_lo, std::uint32_t e_hi) {
  gpukit::device_buffer<unsigned long long> counts(std::vector<unsigned long long>{0, 0});
  constexpr unsigned blocks = 1u << 16, threads = 256;  // 2^24 pairs per seed
  for (std::uint64_t seed = 1; seed <= 4; ++seed) {
    compare_kernel<<<blocks, threads>>>(seed, e_lo, e_hi, counts.data());
    GPUKIT_CHECK_LAUNCH();
  }
  std::vector<unsigned long long> host(2);
  gpukit::copy_to_host(host.data(), counts.data(), host.size() * sizeof(unsigned long long));
  return host;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(wsm5_fast_ops)

GPU_TEST_CASE(div_normal_and_sqrt_normal_match_the_approximate_operations_bitwise) {
  const auto m = mismatches(1, 252);  // every normal divisor below 2^126
  BOOST_TEST(m[0] == 0u);
  BOOST_TEST(m[1] == 0u);
}

GPU_TEST_CASE(the_comparison_sees_a_subnormal_divisor_and_argument) {
  // Exponent field 0: subnormal b and x. rcp.approx.ftz and sqrt.approx.ftz flush them to 0, the full
  // forms scale them first: the results differ for almost every pair.
  const auto m = mismatches(0, 0);
  BOOST_TEST(m[0] > 0u);
  BOOST_TEST(m[1] > 0u);
}

BOOST_AUTO_TEST_SUITE_END()
