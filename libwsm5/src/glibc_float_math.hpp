// glibc's single-precision expf, logf and powf (x > 0), as __host__ __device__ code: the algorithms of glibc
// >= 2.28 (from Arm's optimized-routines), which evaluate in double arithmetic and round once to float.
// Why: the CPU reference and WRF itself (gfortran's EXP, LOG and ** on REAL*4 call glibc) round with these
// functions; CUDA's expf/logf/powf are other functions (2, 1 and 2 ulp), and in the saturation adjustment
// their differences are amplified (physics.hpp, exp_qsat). Evaluated here they return glibc's bits, so the
// GPU variants' e_s is the reference's, at a fraction of the cost of CUDA's double exp/log.
//
// Bitwise glibc: every operation below is the one glibc performs, in its order; a product followed by a
// sum is written as an fma where glibc's FMA build contracts it (x86-64 selects that build on CPUs with
// FMA, aarch64 always contracts), and every other product and sum is rounded on its own (mul, add).
// Measured with glibc 2.36 on x86-64 with FMA (the host path): equal to ::expf on all 2.2e9 floats of
// [-40, 10], to ::logf on all 1.7e9 floats of [1e-30, 1e30], to ::powf for b = 7/3, 1.31, 1.33, 0.8, 0.41,
// 1.81 and 1/3 on every float of [1e-30, 1e25] whose power is a normal float (0.9e9 to 1.5e9 each); the
// forms without fma give the same words on the exp and log ranges. tests/wsm5/test_glibc_math.cu checks
// the host path and the device path against the host's libm (where it is glibc) on 8.4M arguments, and
// both against a long double oracle within glibc's documented errors: expf <= 0.502 ulp, logf and powf
// <= 0.82 ulp (relative errors before the final rounding 1.69 2^-34, 1.96 2^-26 and 2^-27.4).
//
// Domain: finite arguments; expf for |x| < 88 (the saturation exponents are in [-25, 3]; beyond, glibc's
// inf, 0 or subnormal results, without errno), logf and powf for normal x > 0 (validated temperatures,
// pressures and mixing ratios above the callers' thresholds). Inputs outside the domain are a caller's
// bug: expf and logf still return glibc's special values for them, powf returns NaN.
//
// Tables: 2^(i/32) for exp (the bits of the correctly rounded double, minus i << 47, so that adding the
// integer part k << 47 gives 2^(k/32 + i/32)); for log the 16 subinterval centres c chosen by
// optimized-routines (1/c and ln c, resp. log2 c for powf) and the minimax polynomials of those
// routines. On the device the tables are global memory (a warp's lanes index them freely: constant
// memory would serialize distinct indices), 640 bytes in all, L1-resident.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>

#include "host_device.hpp"

namespace wsm5::glibc {

namespace tables {
// Each table twice: the device's copy in global memory, the host's a constexpr array.
#define WSM5_EXP2_TABLE                                                                                           \
  {0x3ff0000000000000ull, 0x3fefd9b0d3158574ull, 0x3fefb5586cf9890full, 0x3fef9301d0125b51ull, 0x3fef72b83c7d517bull, \
   0x3fef54873168b9aaull, 0x3fef387a6e756238ull, 0x3fef1e9df51fdee1ull, 0x3fef06fe0a31b715ull, 0x3feef1a7373aa9cbull, \
   0x3feedea64c123422ull, 0x3feece086061892dull, 0x3feebfdad5362a27ull, 0x3feeb42b569d4f82ull, 0x3feeab07dd485429ull, \
   0x3feea47eb03a5585ull, 0x3feea09e667f3bcdull, 0x3fee9f75e8ec5f74ull, 0x3feea11473eb0187ull, 0x3feea589994cce13ull, \
   0x3feeace5422aa0dbull, 0x3feeb737b0cdc5e5ull, 0x3feec49182a3f090ull, 0x3feed503b23e255dull, 0x3feee89f995ad3adull, \
   0x3feeff76f2fb5e47ull, 0x3fef199bdd85529cull, 0x3fef3720dcef9069ull, 0x3fef5818dcfba487ull, 0x3fef7c97337b9b5full, \
   0x3fefa4afa2a490daull, 0x3fefd0765b6e4540ull}
// 1/c of the 16 log subintervals (shared by logf and powf).
#define WSM5_LOG_INVC_TABLE                                                                                      \
  {0x1.661ec79f8f3bep+0, 0x1.571ed4aaf883dp+0, 0x1.49539f0f010bp+0,  0x1.3c995b0b80385p+0, 0x1.30d190c8864a5p+0, \
   0x1.25e227b0b8eap+0,  0x1.1bb4a4a1a343fp+0, 0x1.12358f08ae5bap+0, 0x1.0953f419900a7p+0, 0x1p+0,               \
   0x1.e608cfd9a47acp-1, 0x1.ca4b31f026aap-1,  0x1.b2036576afce6p-1, 0x1.9c2d163a1aa2dp-1, 0x1.886e6037841edp-1, \
   0x1.767dcf5534862p-1}
// ln c (logf).
#define WSM5_LOG_LOGC_TABLE                                                                                         \
  {-0x1.57bf7808caadep-2, -0x1.2bef0a7c06ddbp-2, -0x1.01eae7f513a67p-2, -0x1.b31d8a68224e9p-3, -0x1.6574f0ac07758p-3, \
   -0x1.1aa2bc79c81p-3,   -0x1.a4e76ce8c0e5ep-4, -0x1.1973c5a611cccp-4, -0x1.252f438e10c1ep-5, 0x0p+0,                \
   0x1.aa5aa5df25984p-5,  0x1.c5e53aa362eb4p-4,  0x1.526e57720db08p-3,  0x1.bc2860d22477p-3,   0x1.1058bc8a07ee1p-2,  \
   0x1.4043057b6ee09p-2}
// log2 c (powf).
#define WSM5_LOG2_LOGC_TABLE                                                                                        \
  {-0x1.efec65b963019p-2, -0x1.b0b6832d4fca4p-2, -0x1.7418b0a1fb77bp-2, -0x1.39de91a6dcf7bp-2, -0x1.01d9bf3f2b631p-2, \
   -0x1.97c1d1b3b7afp-3,  -0x1.2f9e393af3c9fp-3, -0x1.960cbbf788d5cp-4, -0x1.a6f9db6475fcep-5, 0x0p+0,                \
   0x1.338ca9f24f53dp-4,  0x1.476a9543891bap-3,  0x1.e840b4ac4e4d2p-3,  0x1.40645f0c6651cp-2,  0x1.88e9c2c1b9ff8p-2,  \
   0x1.ce0a44eb17bccp-2}
#if defined(__CUDACC__)
static __device__ const std::uint64_t exp2_device[32] = WSM5_EXP2_TABLE;
static __device__ const double log_invc_device[16] = WSM5_LOG_INVC_TABLE;
static __device__ const double log_logc_device[16] = WSM5_LOG_LOGC_TABLE;
static __device__ const double log2_logc_device[16] = WSM5_LOG2_LOGC_TABLE;
#endif
inline constexpr std::uint64_t exp2_host[32] = WSM5_EXP2_TABLE;
inline constexpr double log_invc_host[16] = WSM5_LOG_INVC_TABLE;
inline constexpr double log_logc_host[16] = WSM5_LOG_LOGC_TABLE;
inline constexpr double log2_logc_host[16] = WSM5_LOG2_LOGC_TABLE;
#undef WSM5_EXP2_TABLE
#undef WSM5_LOG_INVC_TABLE
#undef WSM5_LOG_LOGC_TABLE
#undef WSM5_LOG2_LOGC_TABLE

#if defined(__CUDA_ARCH__)
WSM5_HD std::uint64_t exp2_bits(std::uint32_t i) { return __ldg(&exp2_device[i]); }
WSM5_HD double log_invc(int i) { return __ldg(&log_invc_device[i]); }
WSM5_HD double log_logc(int i) { return __ldg(&log_logc_device[i]); }
WSM5_HD double log2_logc(int i) { return __ldg(&log2_logc_device[i]); }
#else
WSM5_HD std::uint64_t exp2_bits(std::uint32_t i) { return exp2_host[i]; }
WSM5_HD double log_invc(int i) { return log_invc_host[i]; }
WSM5_HD double log_logc(int i) { return log_logc_host[i]; }
WSM5_HD double log2_logc(int i) { return log2_logc_host[i]; }
#endif
}  // namespace tables

// ---- bit casts and the fused multiply-add, host and device --------------------------------------------
/// The bits of x as a To of the same size (std::bit_cast before C++20; memcpy compiles to a move).
template <class To, class From>
WSM5_HD To bit_cast(From x) {
  static_assert(sizeof(To) == sizeof(From), "bit_cast between types of one size");
  To t;
  std::memcpy(&t, &x, sizeof t);
  return t;
}
WSM5_HD std::uint32_t bits_of(float x) { return bit_cast<std::uint32_t>(x); }
WSM5_HD float float_of(std::uint32_t u) { return bit_cast<float>(u); }
WSM5_HD std::uint64_t bits_of(double x) { return bit_cast<std::uint64_t>(x); }
WSM5_HD double double_of(std::uint64_t u) { return bit_cast<double>(u); }
/// a * b + c rounded once (DFMA on the device; an explicit fma is one whatever the contraction flags).
WSM5_HD double fma(double a, double b, double c) { return ::fma(a, b, c); }
/// a * b and a + b each rounded on its own: never contracted with a neighbour into an fma, whatever the
/// including code's -fmad (on the host, x86-64's baseline has no fma to contract into; other hosts must
/// build the tests with -ffp-contract=off, tests/wsm5/CMakeLists.txt).
#if defined(__CUDA_ARCH__)
WSM5_HD double mul(double a, double b) { return __dmul_rn(a, b); }
WSM5_HD double add(double a, double b) { return __dadd_rn(a, b); }
#else
WSM5_HD double mul(double a, double b) { return a * b; }
WSM5_HD double add(double a, double b) { return a + b; }
#endif

// ---- 2^(k/32 + r/32) core of expf and powf -----------------------------------------------------------
/// 2^(z / 32) (expf: z = 32 x / ln 2, shift = 1.5 2^52) or 2^z (powf: shift = 1.5 2^52 / 32), from the table
/// and a cubic c2 r + c1 r^2 + c0 r^3 of the remainder r = z - round(z) (on the grid the shift sets): adding
/// the shift rounds z to that grid and leaves the grid index k in the low bits of the sum.
WSM5_HD double exp2_core(double z, double shift, double c0, double c1, double c2) {
  double kd = add(z, shift);                 // round z to the grid (ties to even), the integer in the low bits
  const std::uint64_t ki = bits_of(kd);
  kd = add(kd, -shift);
  const double r = add(z, -kd);              // |r| <= 1/2 (expf) or 1/64 (powf)
  std::uint64_t t = tables::exp2_bits(static_cast<std::uint32_t>(ki % 32));
  t += ki << 47;                             // 2^(k / 32) = table[k mod 32] * 2^(k div 32)
  const double s = double_of(t);
  const double p = fma(c0, r, c1);
  const double r2 = mul(r, r);
  double y = fma(c2, r, 1.0);
  y = fma(p, r2, y);
  return mul(y, s);
}

/// glibc's expf(x) for finite x (<= 0.502 ulp).
WSM5_HD float expf(float x) {
  const std::uint32_t abstop = (bits_of(x) >> 20) & 0x7ff;
  if (abstop >= (bits_of(88.0f) >> 20)) {  // |x| >= 88 (or not finite): glibc's special cases
    if (bits_of(x) == 0xff800000u) return 0.0f;
    if (abstop >= 0x7f8) return x + x;
    if (x > 0x1.62e42ep6f) return float_of(0x7f800000u);  // overflow
    if (x < -0x1.9fe368p6f) return 0.0f;                  // underflow
  }
  constexpr double n = 32.0;
  const double z = mul(0x1.71547652b82fep+0 * n, static_cast<double>(x));  // x / (ln 2 / 32)
  return static_cast<float>(exp2_core(z, 0x1.8p+52, 0x1.c6af84b912394p-5 / n / n / n, 0x1.ebfce50fac4f3p-3 / n / n,
                                      0x1.62e42ff0c52d6p-1 / n));
}

/// The argument reduction of logf and powf for a normal x > 0 (its bits ix): x = 2^k z with z's bits in
/// [0x3f330000, 2 x 0x3f330000), z in subinterval i of centre c, r = z / c - 1 (|r| < 1/32) as one fma
/// with the table's 1/c.
struct log_reduced {
  int i, k;
  double r;
};
WSM5_HD log_reduced reduce_log(std::uint32_t ix) {
  const std::uint32_t tmp = ix - 0x3f330000u;
  const std::uint32_t top = tmp & 0xff800000u;
  const int i = static_cast<int>((tmp >> 19) % 16);
  const double z = static_cast<double>(float_of(ix - top));
  return {i, static_cast<std::int32_t>(top) >> 23, fma(z, tables::log_invc(i), -1.0)};
}

/// glibc's logf(x) for normal x > 0 (<= 0.82 ulp); 0 at 1, glibc's special values elsewhere.
WSM5_HD float logf(float x) {
  std::uint32_t ix = bits_of(x);
  if (ix == 0x3f800000u) return 0.0f;
  if (ix - 0x00800000u >= 0x7f800000u - 0x00800000u) {  // 0, subnormal, negative, inf, nan
    if ((ix << 1) == 0) return -float_of(0x7f800000u);
    if (ix == 0x7f800000u) return x;
    if ((ix & 0x80000000u) || (ix << 1) >= 0xff000000u) return float_of(0x7fc00000u);
    ix = bits_of(x * 0x1p23f) - (23u << 23);  // subnormal: normalize
  }
  // ln x = k ln 2 + ln c + ln(1 + r), the last a polynomial in r.
  const log_reduced red = reduce_log(ix);
  const double r = red.r;
  const double y0 = fma(static_cast<double>(red.k), 0x1.62e42fefa39efp-1, tables::log_logc(red.i));
  const double r2 = mul(r, r);
  double y = fma(0x1.5575b0be00b6ap-2, r, -0x1.ffffef20a4123p-2);
  y = fma(-0x1.00ea348b88334p-2, r2, y);
  y = fma(y, r2, add(y0, r));
  return static_cast<float>(y);
}

/// glibc's powf(x, y) for normal x > 0 and finite y whose result neither overflows nor underflows to 0
/// (<= 0.82 ulp); NaN outside that domain (never glibc's result there).
WSM5_HD float powf(float x, float y) {
  const std::uint32_t ix = bits_of(x);
  if (ix - 0x00800000u >= 0x7f800000u - 0x00800000u) return float_of(0x7fc00000u);
  // log2 x = k + log2 c + log2(1 + r), a degree-5 polynomial in r (glibc's log2_inline).
  const log_reduced red = reduce_log(ix);
  const double r = red.r;
  const double y0 = add(tables::log2_logc(red.i), static_cast<double>(red.k));
  const double r2 = mul(r, r);
  const double a = fma(0x1.27616c9496e0bp-2, r, -0x1.71969a075c67ap-2);
  const double p = fma(0x1.ec70a6ca7baddp-2, r, -0x1.7154748bef6c8p-1);
  const double r4 = mul(r2, r2);
  double q = fma(0x1.71547652ab82bp+0, r, y0);
  q = fma(p, r2, q);
  const double log2x = fma(a, r4, q);
  const double ylogx = mul(static_cast<double>(y), log2x);
  // Overflow or underflow to 0: not in the domain (glibc's paths for them not taken).
  if (!(ylogx <= 0x1.fffffffd1d571p+6 && ylogx > -150.0)) return float_of(0x7fc00000u);
  return static_cast<float>(exp2_core(ylogx, 0x1.8p+52 / 32.0, 0x1.c6af84b912394p-5, 0x1.ebfce50fac4f3p-3,
                                      0x1.62e42ff0c52d6p-1));
}

}  // namespace wsm5::glibc
