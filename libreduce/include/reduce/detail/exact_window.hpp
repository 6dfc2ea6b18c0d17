// The reproducible sum's per-thread accumulator (host and device code; no CUDA headers): exact, so
// the final rounding (exact_to_float) gives the same bits however the elements were split among
// threads and blocks. The CUDA kernel runs it; tests/reduce/test_exact.cpp runs it on the host with
// random splits and compares with the CPU twin bit for bit.
//
// Every finite x is the integer +-m << p in units of the smallest subnormal (exact_sum.hpp). The
// accumulator keeps a WINDOW: a base exponent and a two's-complement __int128 `total` holding
// sum (+-m << (p - base)) of the elements with t = p - base in [0, width):
//   float (width 25):  +-m << t < 2^48; a tile of 16 is summed in a DOUBLE, exactly (all multiples of
//                      2^(base - 149), sum < 2^52 of them), converted to int64 and added to total;
//   double (width 32): +-m << t < 2^85: summed in an __int128 (2^42 elements before it could overflow).
// add_tile() is branch-free over the tile (float: about 8 SASS instructions per element, see
// add_tile; the integer terms, unpack / sign select / 64-bit shift and add, took ~16 and 63
// registers: 540 us at 2^28 floats on an H200 against 262 us for this design, libreduce/README.md) and takes a
// second, per-element pass only when some element lies outside the window or is not finite. There
// slow() adds an element below the window straight to the limbs, and one above it empties the window
// into the limbs and re-centres the window `centre` exponents below it (float: 2^4 larger and 2^20
// smaller elements fit; double: 2^7 and 2^24): uniform floats in [-1, 1) leave the window about once
// per 2^20 elements.
// The limbs are reached through `sink(limb, digit)`: radix-2^32 digits (the top one signed) of
// exact_traits<T>::limbs int64 limbs; every digit is < 2^32 in magnitude.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "exact_sum.hpp"

#if defined(__CUDACC__)
#define REDUCE_NOINLINE __noinline__
#else
#define REDUCE_NOINLINE __attribute__((noinline))
#endif

namespace reduce::detail {

template <class T>
struct window_traits;
template <>
struct window_traits<float> {
  // 25 exponents: a window term is < 2^(24 + 24), so a tile's 16 terms sum to < 2^52 and their sum
  // in a DOUBLE is exact (see add_tile). A re-centred window puts the new element at t = 20: 2^4
  // larger and 2^20 smaller elements stay in it.
  static constexpr int width = 25;
  static constexpr int centre = 20;
  static constexpr int shift_mask = 31;  // t & shift_mask == t for every t in the window
  static constexpr bool opens_at_largest = false;  // see exact_window::open_at_largest
  // p = max(e, 1) - 1 lies in [0, 254], 254 for inf/NaN: a base <= 254 - width keeps those outside.
  static constexpr int max_base = 254 - width;
  using lane_t = long long;  // a term
};
template <>
struct window_traits<double> {
  static constexpr int width = 32;
  static constexpr int centre = 24;  // 2^7 larger and 2^24 smaller elements stay in a new window
  static constexpr int shift_mask = 31;
  static constexpr bool opens_at_largest = false;
  static constexpr int max_base = 2046 - width;
  using lane_t = __int128;
};
/// float, WIDE: 64 exponents, each term an __int128 (< 2^(24 + 64)): 2^39 terms fit in `total`. For threads
/// that add a few dozen terms spread over many magnitudes (a solver's dots: squares of a residual whose
/// entries span 10^-6 .. 1 span 2^40), where the 25-exponent window sends most of them to the block's
/// limbs (a shared 64-bit atomic each, a compare-and-swap loop) and re-centres often. A new window puts
/// its element at t = 40: 2^24 larger and 2^40 smaller elements stay in it. About twice the instructions
/// per in-window term of the tile pass (unpack, 128-bit shift, negate, add), no tile trick.
struct wide_float_window {
  static constexpr int width = 64;
  static constexpr int centre = 40;
  static constexpr int shift_mask = 63;
  static constexpr bool opens_at_largest = true;
  static constexpr int max_base = 254 - width;
  using lane_t = __int128;
};

constexpr int no_window = -(1 << 20);  // every element is "above" it: the first one opens a window

/// v * 2^s for a signed v that may be negative, with the result known to fit (every caller below:
/// |result| < 2^55 for long long, < 2^127 for __int128). `v << s` on a negative v is undefined behaviour
/// in C++17 (UBSan: "left shift of negative value"; defined only from C++20). Shifting the unsigned
/// representation instead gives the SAME bits for every input: a left shift is one operation on the
/// two's-complement word, whether it is read as signed or unsigned (both are v * 2^s modulo 2^N), and
/// the conversion back to signed is the modulo-2^N one (implementation-defined in C++17, defined that
/// way by GCC, Clang and NVCC, required by C++20). So wherever the old signed shift was defined the
/// value is identical, and it compiles to the same single shift (SHF on the GPU): the hot loop and the
/// reproducible sum's bits are unchanged. A multiplication by 2^s would be as exact but costs a 64- or
/// 128-bit multiply on the GPU. (Not a template: std::make_unsigned<__int128> is missing in strict
/// -std=c++17 libstdc++.)
REDUCE_HD long long shift_left_signed(long long v, int s) {
  return static_cast<long long>(static_cast<unsigned long long>(v) << s);
}
REDUCE_HD __int128 shift_left_signed(__int128 v, int s) {
  return static_cast<__int128>(static_cast<unsigned __int128>(v) << s);
}

/// The signed value v * 2^(base & 31) (|v| < 2^127, so < 2^158) as five radix-2^32 digits, the top
/// one signed, that belong at limbs (base >> 5) + 0..4.
REDUCE_HD void window_digits(__int128 v, int base, long long d[5]) {
  const int s = base & 31;
  const auto lo = static_cast<unsigned long long>(v);
  const auto hi = static_cast<unsigned long long>(v >> 64);
  const unsigned long long ext = v < 0 ? ~0ull : 0ull;
  const unsigned long long lo2 = lo << s;
  const unsigned long long hi2 = (hi << s) | (s ? lo >> (64 - s) : 0ull);
  const unsigned long long ext2 = (ext << s) | (s ? hi >> (64 - s) : 0ull);
  d[0] = static_cast<long long>(lo2 & 0xffffffffull);
  d[1] = static_cast<long long>(lo2 >> 32);
  d[2] = static_cast<long long>(hi2 & 0xffffffffull);
  d[3] = static_cast<long long>(hi2 >> 32);
  d[4] = static_cast<long long>(static_cast<std::int32_t>(static_cast<std::uint32_t>(ext2 & 0xffffffffull)));
}

template <class T, class Traits = window_traits<T>>
struct exact_window {
  using tr = exact_traits<T>;
  using wt = Traits;
  using bits_t = typename tr::bits_t;
  static constexpr int sign_shift = 8 * static_cast<int>(sizeof(T)) - 1;
  static_assert((wt::max_base >> 5) + 4 < tr::limbs, "a window's five digits fit in the limbs");
  static_assert(((tr::exp_mask - 2) >> 5) + 4 < tr::limbs, "a single element's digits fit in the limbs");

  __int128 total = 0;        // in units of 2^(base + lsb_exp)
  int base1 = no_window + 1;  // base + 1, so that t = max(e, 1) - base1
  unsigned flags = 0;         // exact_nan / exact_pos_inf / exact_neg_inf seen

  REDUCE_HD int base() const { return base1 - 1; }

  /// x's term relative to a window at base1 - 1, and whether x belongs there (zeros do, with term 0).
  REDUCE_HD static bool term(T x, int base1, typename wt::lane_t& out) {
    bits_t b;
    std::memcpy(&b, &x, sizeof b);
    const int e = static_cast<int>((b >> tr::mant_bits) & tr::exp_mask);
    const bits_t mag = b & ((bits_t{1} << tr::mant_bits) - 1);
    const bits_t m = e ? (mag | (bits_t{1} << tr::mant_bits)) : mag;
    const int t = (e > 1 ? e : 1) - base1;
    const bool ok = static_cast<bits_t>(b << 1) == 0 || static_cast<unsigned>(t) < static_cast<unsigned>(wt::width);
    const bool neg = (b >> sign_shift) != 0;
    if constexpr (std::is_same_v<typename wt::lane_t, long long>) {
      const int ms = ok ? (neg ? -static_cast<int>(m) : static_cast<int>(m)) : 0;
      out = shift_left_signed(static_cast<long long>(ms), t & wt::shift_mask);  // |ms| < 2^24: fits
    } else if constexpr (sizeof(T) == 4) {
      // wide float: m < 2^24 shifted by s < 64 as two 64-bit halves, branch-free (a generic __int128
      // shift tests s >= 64 and diverged on terms of mixed exponents); (m >> 1) >> (63 - s) is m >> (64 - s)
      // for s >= 1 and 0 for s = 0.
      const std::uint64_t mm = ok ? static_cast<std::uint64_t>(m) : 0u;
      const int sh = t & wt::shift_mask;
      const __int128 v = static_cast<__int128>((static_cast<unsigned __int128>((mm >> 1) >> (63 - sh)) << 64) |
                                               (mm << sh));
      out = neg ? -v : v;
    } else {
      const __int128 v = static_cast<__int128>(ok ? m : 0) << (t & wt::shift_mask);
      out = neg ? -v : v;
    }
    return ok;
  }

  /// Adds v * 2^base (|v| < 2^127) to the limbs.
  template <class Sink>
  REDUCE_HD static void emit(__int128 v, int base, Sink&& sink) {
    if (v == 0) return;
    long long d[5];
    window_digits(v, base, d);
    const int k = base >> 5;
    for (int i = 0; i < 5; ++i)
      if (d[i] != 0) sink(k + i, d[i]);
  }

  /// x outside the window (or not finite): see the header comment. Out of line, with the state passed
  /// by value, so that the rarely taken path costs the hot loop neither registers nor a stack frame.
  struct state {
    __int128 total;
    int base1;
    unsigned flags;
  };
  template <class Sink>
  REDUCE_HD REDUCE_NOINLINE static state slow_step(state s, T x, Sink sink) {
    std::uint64_t m;
    int p;
    bool neg;
    if (!decompose(x, m, p, neg, s.flags)) return s;  // zero, inf, NaN
    const __int128 v = neg ? -static_cast<__int128>(m) : static_cast<__int128>(m);
    const int t = p - (s.base1 - 1);
    if (t < 0) {  // below the window: straight into the limbs
      emit(v, p, sink);
      return s;
    }
    if (t < wt::width) {  // inside (the window moved since x was tested)
      s.total += shift_left_signed(v, t);  // |v| < 2^53, t < width: < 2^85
      return s;
    }
    emit(s.total, s.base1 - 1, sink);  // above: empty the window, re-centre it
    int b = p - wt::centre;
    b = b < 0 ? 0 : (b > wt::max_base ? wt::max_base : b);
    s.base1 = b + 1;
    s.total = shift_left_signed(v, p - b);  // p - b < width: < 2^85
    return s;
  }
  template <class Sink>
  REDUCE_HD void slow(T x, Sink&& sink) {
    const state s = slow_step(state{total, base1, flags}, x, sink);
    total = s.total;
    base1 = s.base1;
    flags = s.flags;
  }

  /// Without a window yet (total == 0): opens one with the tile's largest finite element at t = centre,
  /// inline (wide windows only: opens_at_largest). Opening at the first element instead (the slow path's
  /// way) costs each thread an out-of-line call, and re-centres whenever a later element is
  /// 2^(width - centre) larger: for a solver's dots (W = 4 products of two vectors spread over 2^20 each,
  /// 15 tiles per thread) 0.27 re-centres per thread against 0.008 (a host simulation), each a divergent
  /// call that stalls its warp; H200, a pass of 3 such dots over 160^3 floats: 157 -> 77 us. Not in the
  /// 25-exponent tile window of reduce::reproducible_sum, whose long runs per thread make the first
  /// element's window matter little and whose tile pass is held to 48 registers.
  template <int N>
  REDUCE_HD void open_at_largest(const T (&x)[N]) {
    int top = -1;
    for (int i = 0; i < N; ++i) {
      bits_t b;
      std::memcpy(&b, &x[i], sizeof b);
      const int e = static_cast<int>((b >> tr::mant_bits) & tr::exp_mask);
      const bool finite_nonzero = e != tr::exp_mask && static_cast<bits_t>(b << 1) != 0;
      const int p = (e > 1 ? e : 1) - 1;
      top = finite_nonzero && p > top ? p : top;
    }
    if (top < 0) return;  // zeros and non-finite elements only: no window yet
    int b = top - wt::centre;
    b = b < 0 ? 0 : (b > wt::max_base ? wt::max_base : b);
    base1 = b + 1;
  }

  /// One element (head, tail, partial tiles, misaligned data).
  template <class Sink>
  REDUCE_HD void add(T x, Sink&& sink) {
    typename wt::lane_t v;
    if (term(x, base1, v)) total += v;
    else slow(x, sink);
  }

  /// float: whether the bits' magnitude `a` lies in the window [lo, lo + span) (see float_range) or
  /// is a zero; the same test as term()'s `ok`, on the bits.
  REDUCE_HD static bool in_float_window(std::uint32_t a, std::uint32_t lo, std::uint32_t span) {
    return a - lo < span || a == 0;
  }
  /// float: the window [base, base + width) of p = max(e, 1) - 1 as a range of |x|'s bits: e in
  /// [base1, base1 + width) (e = 0 included when base1 = 1; empty without a window).
  REDUCE_HD static void float_range(int b1, std::uint32_t& lo, std::uint32_t& span) {
    lo = b1 > 1 ? static_cast<std::uint32_t>(b1) << tr::mant_bits : 0u;
    span = b1 >= 1 ? (static_cast<std::uint32_t>(b1 + wt::width) << tr::mant_bits) - lo : 0u;
  }

  /// A tile of N elements: one branch-free pass; a second pass for the elements outside the window
  /// (tested against the window of the first pass, which slow() may move).
  template <int N, class Sink>
  REDUCE_HD void add_tile(const T (&x)[N], Sink&& sink) {
    if constexpr (wt::opens_at_largest)
      if (base1 == no_window + 1) open_at_largest(x);
    const int b1 = base1;
    bool all_in = true;
    if constexpr (std::is_same_v<typename wt::lane_t, long long>) {
      // float: the window's elements are integer multiples of g = 2^(base + lsb_exp) below 2^48 g, so
      // the tile's sum in a double is exact (< 2^52 g) and converts exactly to the int64 s / g. About
      // 8 instructions per element (abs, two compares, a select, F2F.F64.F32, DADD) instead of ~16
      // for the integer terms (unpack, sign, 64-bit shift and add).
      std::uint32_t lo, span;
      float_range(b1, lo, span);
      double s = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int i = 0; i < N; ++i) {
        std::uint32_t b;
        std::memcpy(&b, &x[i], sizeof b);
        const bool ok = in_float_window(b & 0x7fffffffu, lo, span);
        all_in &= ok;
        const std::uint32_t kept = ok ? b : 0u;  // select the float, not the double (1 SEL, not 2)
        float xk;
        std::memcpy(&xk, &kept, sizeof xk);
        s += static_cast<double>(xk);
      }
      if (s != 0) {  // then there is a window: 2^-(base + lsb_exp) = 2^(149 - base) <= 2^149
        const std::uint64_t e = static_cast<std::uint64_t>(1023 - tr::lsb_exp - (b1 - 1)) << 52;
        double inv_g;
        std::memcpy(&inv_g, &e, sizeof inv_g);
        total += static_cast<long long>(s * inv_g);
      }
    } else {
      typename wt::lane_t s = 0;
#if defined(__CUDA_ARCH__)
#pragma unroll
#endif
      for (int i = 0; i < N; ++i) {
        typename wt::lane_t v;
        all_in &= term(x[i], b1, v);
        s += v;
      }
      total += s;
    }
    if (all_in) return;
    // term()'s test is in_float_window's for float, written differently on purpose: the compiler
    // then recomputes it here instead of keeping 16 "ok" bits live through the first pass (2 more
    // instructions per element).
#if defined(__CUDA_ARCH__)
#pragma unroll  // a dynamically indexed tile would live in local memory
#endif
    for (int i = 0; i < N; ++i) {
      typename wt::lane_t v;
      if (!term(x[i], b1, v)) slow(x[i], sink);
    }
  }

  /// Empties the window into the limbs.
  template <class Sink>
  REDUCE_HD void flush(Sink&& sink) {
    emit(total, base(), sink);
    total = 0;
  }
};

/// float only: a RUN, a double that holds an exact sum of floats while it can, in front of the limbs. A
/// float has 24 significant bits and a double 53, so the terms a thread adds (a solver's dots: rows of
/// vectors of similar magnitudes) mostly sum exactly in a double: about 10 instructions a term (convert,
/// three adds, three compares, a select) against ~33 integer ones for a wide window's term (unpack, 128-bit shift,
/// negate, add), 2 registers a sum against 6, and a block's runs merge the same way (merge_runs) instead
/// of a window's digit-by-digit warp sums. A term that would make the double sum round goes to the limbs
/// instead (spill_to_limbs: the smaller of the two), so the runs and the limbs together always hold the
/// exact sum: the same integer as adding every term to a window, hence the same bits.
/// For double terms a run would rarely stay exact (53-bit terms): the wide window is used alone.
struct float_run {
  double value = 0;  // exactly a sum of floats: a multiple of 2^-149, |value| < 2^126 or one float

  /// Adds b (a float, or another run's value) when the double sum is exact and below 2^126 (so split()
  /// stays in float range); otherwise (NaN and Inf included) returns false and leaves value as it was.
  /// Exactness by Dekker's Fast2Sum: with |a| >= |b| and s = fl(a + b), s - a is computed exactly, so
  /// s == a + b iff fl(s - a) == b. Both orders are tested instead of ordering a and b first: an exact
  /// sum passes both (s - a = b and s - b = a are representable), an inexact one fails the order that
  /// Fast2Sum covers. Three subtractions and compares, no selects, and `&` rather than `&&` so the
  /// compiler makes no branch of it (this runs three times a row in the stencil SpMV's exact epilogue).
  REDUCE_HD bool try_add(double b) {
    const double s = value + b;
    const bool exact = (s - value == b) & (s - b == value) & (std::fabs(s) < 0x1p126);
    value = exact ? s : value;
    return exact;
  }

  /// After try_add(t) failed: whether t is to go to the limbs (true: t is not finite, or no larger than
  /// the run) or the run is (false: then restart(t)). Keeping the larger one in the run keeps the run
  /// exact for the terms that follow it.
  REDUCE_HD bool spill_term(double t) const { return !std::isfinite(t) || !(std::fabs(t) > std::fabs(value)); }
  REDUCE_HD void restart(double t) { value = t; }

  /// value as three floats whose sum is exactly value (zeros where fewer suffice): value is a multiple
  /// of 2^-149 with <= 53 significant bits and |value| < 2^126 (or a float), so hi = fl(value) is finite,
  /// value - hi needs <= 30 bits (|value - hi| <= ulp(hi) / 2, a multiple of value's last bit) and is
  /// exact in double, mid = fl(value - hi) leaves <= 7 bits, and lo is that rest, a float exactly (a
  /// multiple of 2^-149: subnormals included).
  REDUCE_HD void split(float (&part)[3]) const {
    part[0] = static_cast<float>(value);
    const double r1 = value - static_cast<double>(part[0]);
    part[1] = static_cast<float>(r1);
    part[2] = static_cast<float>(r1 - static_cast<double>(part[1]));
  }
};

/// A finite float straight into the limbs: the (at most two) radix-2^32 digits of its integer m << p
/// (m < 2^24, so m << (p & 31) < 2^55); NaN and Inf set their flag instead. Not exact_window::emit: that
/// one takes a 128-bit value and writes five two's-complement digits, and this path is inlined into the
/// stencil SpMV's row loop, which holds 40 registers with it.
template <class Sink>
REDUCE_HD void emit_float(float x, Sink&& sink, unsigned& flags) {
  std::uint64_t m;
  int p;
  bool neg;
  if (!decompose(x, m, p, neg, flags)) return;
  const std::uint64_t v = m << (p & 31);
  const auto lo = static_cast<long long>(v & 0xffffffffull);
  const auto hi = static_cast<long long>(v >> 32);
  const int k = p >> 5;
  if (lo != 0) sink(k, neg ? -lo : lo);
  if (hi != 0) sink(k + 1, neg ? -hi : hi);
}
/// A run's value into the limbs (its three floats).
template <class Sink>
REDUCE_HD void emit_run(const float_run& run, Sink&& sink) {
  float part[3];
  run.split(part);
  unsigned none = 0;  // a run is finite
  for (const float q : part) emit_float(q, sink, none);
}

/// After run.try_add(t) failed for a float term t: t into the limbs, or (t the larger) the run, and t
/// starts a new run. So the run and the limbs together always hold the exact sum of the terms.
template <class Sink>
REDUCE_HD void spill_to_limbs(float_run& run, float t, Sink&& sink, unsigned& flags) {
  if (run.spill_term(t)) {
    emit_float(t, sink, flags);
    return;
  }
  emit_run(run, sink);
  run.restart(t);
}

/// Two runs into one (a block's tree): their double sum where exact, else the smaller one into the
/// limbs and the larger kept.
template <class Sink>
REDUCE_HD float_run merge_runs(float_run a, const float_run& b, Sink&& sink) {
  if (a.try_add(b.value)) return a;
  const bool keep_a = std::fabs(a.value) >= std::fabs(b.value);
  emit_run(keep_a ? b : a, sink);
  return keep_a ? a : b;
}

}  // namespace reduce::detail
