// Exact summation of floats as integers, shared by the reproducible sum's CUDA kernel and its CPU twin
// (host and device code; no CUDA headers).
//
// Every finite float/double x is +-m * 2^(p + lsb_exp) with an integer mantissa m (24 / 53 bits) and
// p = max(biased exponent, 1) - 1 >= 0, lsb_exp = -149 (float) / -1074 (double): the smallest
// subnormal. So x is EXACTLY the integer +-m << p in units of 2^lsb_exp, and the sum of any set of
// inputs is an integer of at most 277 + 63 bits (float) / 2098 + 63 bits (double) for up to 2^63
// terms. Integers add associatively, so the accumulated value -- and its single rounding at the end --
// do not depend on the order of the additions: the same bits on any grid, block size, GPU or CPU.
// The accumulator is `limbs` signed 64-bit words of radix 2^32 (value = sum limb[i] 2^(32 i)); a limb
// gains less than 2^32 in magnitude per addition, so 2^31 additions fit between normalizations.
#pragma once
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "reduce/operators.hpp"  // REDUCE_HD

namespace reduce::detail {

template <class T>
struct exact_traits;
template <>
struct exact_traits<float> {
  using bits_t = std::uint32_t;
  static constexpr int mant_bits = 23;
  static constexpr int exp_mask = 0xff;
  static constexpr int lsb_exp = -149;
  static constexpr int limbs = 12;  // ceil((254 + 24 + 63) / 32) + 1
};
template <>
struct exact_traits<double> {
  using bits_t = std::uint64_t;
  static constexpr int mant_bits = 52;
  static constexpr int exp_mask = 0x7ff;
  static constexpr int lsb_exp = -1074;
  static constexpr int limbs = 68;  // ceil((2046 + 53 + 63) / 32) + 1
};

/// Flags of non-finite inputs seen.
constexpr unsigned exact_nan = 1, exact_pos_inf = 2, exact_neg_inf = 4;

/// x = (neg ? -1 : 1) * m * 2^(p + lsb_exp). Returns true for a finite nonzero x; zeros return false,
/// infinities and NaNs return false and set their flag.
template <class T>
REDUCE_HD bool decompose(T x, std::uint64_t& m, int& p, bool& neg, unsigned& flags) {
  using tr = exact_traits<T>;
  typename tr::bits_t b;
  std::memcpy(&b, &x, sizeof b);
  const int e = static_cast<int>((b >> tr::mant_bits) & tr::exp_mask);
  neg = (b >> (8 * sizeof(T) - 1)) != 0;
  m = static_cast<std::uint64_t>(b & ((typename tr::bits_t{1} << tr::mant_bits) - 1));
  if (e == tr::exp_mask) {
    flags |= m ? exact_nan : (neg ? exact_neg_inf : exact_pos_inf);
    return false;
  }
  if (e) m |= std::uint64_t{1} << tr::mant_bits;
  p = e ? e - 1 : 0;
  return m != 0;
}

/// Carries every limb but the top one into [0, 2^32); the top one keeps the sign.
REDUCE_HD void normalize_limbs(std::int64_t* limbs, int count) {
  std::int64_t carry = 0;
  for (int i = 0; i + 1 < count; ++i) {
    const std::int64_t v = limbs[i] + carry;
    limbs[i] = v & 0xffffffffll;
    carry = v >> 32;  // arithmetic shift: floor division by 2^32
  }
  limbs[count - 1] += carry;
}

/// The position of the highest set bit of x != 0.
REDUCE_HD int highest_set_bit(std::uint32_t x) {
#if defined(__CUDA_ARCH__)
  return 31 - __clz(static_cast<int>(x));
#else
  return 31 - __builtin_clz(x);
#endif
}

/// The integer in `limbs` (any radix-2^32 signed limbs, not necessarily normalized) times 2^lsb_exp,
/// rounded to nearest even, with IEEE's rules for the non-finite inputs in `flags`: NaN if a NaN was
/// seen or both infinities, else the infinity seen. An exact zero gives +0.
/// `d` is scratch for exact_traits<T>::limbs digits (shared memory on the GPU: no local-memory frame).
template <class T>
REDUCE_HD T exact_to_float(const std::int64_t* limbs_in, unsigned flags, std::uint32_t* d) {
  using tr = exact_traits<T>;
  constexpr int L = tr::limbs;
  constexpr int P = tr::mant_bits + 1;
  if ((flags & exact_nan) || (flags & (exact_pos_inf | exact_neg_inf)) == (exact_pos_inf | exact_neg_inf))
    return std::numeric_limits<T>::quiet_NaN();
  if (flags & exact_pos_inf) return std::numeric_limits<T>::infinity();
  if (flags & exact_neg_inf) return -std::numeric_limits<T>::infinity();
  std::int64_t carry = 0;
  for (int i = 0; i < L; ++i) {
    const std::int64_t v = limbs_in[i] + carry;
    d[i] = static_cast<std::uint32_t>(v & 0xffffffffll);
    carry = v >> 32;
  }
  const bool neg = carry < 0;  // 0 or -1: the sign extension past the top limb
  if (neg) {                   // magnitude: two's complement negation
    std::uint64_t c = 1;
    for (int i = 0; i < L; ++i) {
      const std::uint64_t t = static_cast<std::uint64_t>(static_cast<std::uint32_t>(~d[i])) + c;
      d[i] = static_cast<std::uint32_t>(t);
      c = t >> 32;
    }
  }
  int h = L - 1;
  while (h >= 0 && d[h] == 0) --h;
  if (h < 0) return T(0);
  const int msb = 32 * h + highest_set_bit(d[h]);
  auto bit = [&](int i) -> std::uint64_t { return (d[i >> 5] >> (i & 31)) & 1u; };
  std::uint64_t q = 0;
  int shift = 0;
  if (msb < P) {  // at most P bits: exactly representable (possibly subnormal)
    q = d[0] | (h >= 1 ? static_cast<std::uint64_t>(d[1]) << 32 : 0);
  } else {
    shift = msb - (P - 1);
    // The P bits from `shift` up lie in digits k .. k + 2 (at most h): bits o .. o + P - 1 of the 96-bit
    // hi:lo, taken with two shifts instead of P single-bit reads (the last block of every exact kernel
    // runs this on one thread per sum, while the rest of the GPU waits for the kernel to end).
    const int k = shift >> 5, o = shift & 31;
    const std::uint64_t lo = d[k] | (k + 1 <= h ? static_cast<std::uint64_t>(d[k + 1]) << 32 : 0);
    const std::uint64_t hi = k + 2 <= h ? d[k + 2] : 0;
    q = ((lo >> o) | (o != 0 ? hi << (64 - o) : 0)) & ((std::uint64_t{1} << P) - 1);
    const bool round = bit(shift - 1) != 0;
    bool sticky = false;
    const int w = (shift - 1) >> 5;
    for (int i = 0; i < w && !sticky; ++i) sticky = d[i] != 0;
    if (!sticky && ((shift - 1) & 31) != 0) sticky = (d[w] & ((1u << ((shift - 1) & 31)) - 1u)) != 0;
    if (round && (sticky || (q & 1u))) ++q;
    if (q >> P) {
      q >>= 1;
      ++shift;
    }
  }
  T r;
  if constexpr (sizeof(T) == 4) r = ldexpf(static_cast<float>(q), shift + tr::lsb_exp);  // exact or +inf
  else r = ldexp(static_cast<double>(q), shift + tr::lsb_exp);
  return neg ? -r : r;
}

}  // namespace reduce::detail
