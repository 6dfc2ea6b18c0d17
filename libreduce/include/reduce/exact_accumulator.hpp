// The exact accumulator state behind reduce::reproducible_sum, public so that partial sums computed in
// different places (ranks of a distributed run, chunks of a stream, GPUs) can be merged EXACTLY and
// rounded once: the result is then the correctly rounded sum of all the inputs, the same bits as
// reduce::reproducible_sum of their concatenation, whatever the partition. No CUDA syntax.
//
// Representation: every finite float/double is an integer multiple of the smallest subnormal
// 2^lsb_exp (lsb_exp = -149 / -1074), so a sum of such values is an integer; it is held as `limbs`
// signed 64-bit words of radix 2^32 (value = sum_i limb[i] 2^(32 i) 2^lsb_exp). 12 limbs for float, 68
// for double: the largest finite magnitude (2^128 / 2^1024) times 2^63 terms, plus the sign, fits.
// A state as returned (and after merge) is NORMALIZED: limb[0 .. limbs-2] in [0, 2^32), the top limb
// signed and small (|top| < 2^31 for any 2^63 finite terms). So up to 2^31 normalized states can be added
// limb by limb in int64 without overflow: an MPI_SUM / ncclSum all-reduce over the `words` int64 of the
// struct is an exact merge (the non-finite fields add too: they only need to be nonzero when seen).
#pragma once
#include <cstdint>
#include <type_traits>

#include "reduce/device.hpp"

namespace reduce {

template <class T>
struct exact_accumulator {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "float or double");
  /// ceil((max exponent + mantissa bits + 63) / 32) + 1: 12 (float), 68 (double).
  static constexpr int limbs = std::is_same_v<T, float> ? 12 : 68;
  /// The struct as int64 words, for an all-reduce: limbs plus the three non-finite counts.
  static constexpr int words = limbs + 3;

  std::int64_t limb[limbs] = {};
  std::int64_t nan = 0;      ///< > 0 when a NaN was summed
  std::int64_t pos_inf = 0;  ///< > 0 when +inf was summed
  std::int64_t neg_inf = 0;  ///< > 0 when -inf was summed
};
static_assert(sizeof(exact_accumulator<float>) == exact_accumulator<float>::words * sizeof(std::int64_t));
static_assert(sizeof(exact_accumulator<double>) == exact_accumulator<double>::words * sizeof(std::int64_t));

/// into += from, exactly (limb addition, then normalization). Host.
template <class T>
void merge(exact_accumulator<T>& into, const exact_accumulator<T>& from);

/// Carries limb[0 .. limbs-2] into [0, 2^32) (after limb-wise additions, e.g. an MPI_SUM of states).
template <class T>
void normalize(exact_accumulator<T>& a);

/// The accumulated value rounded ONCE to nearest even: NaN if a NaN was seen or both infinities, else the
/// infinity seen, else the correctly rounded finite sum (+-inf when it overflows, +0 for an exact zero).
/// Accepts normalized or merely limb-summed states. Host.
/// Example:
///   auto a = reduce::reference::reproducible_sum_state(x.data(), half);
///   reduce::merge(a, reduce::reference::reproducible_sum_state(x.data() + half, n - half));
///   float s = reduce::round_exact(a);   // == reduce::reference::reproducible_sum(x.data(), n), bitwise
template <class T>
T round_exact(const exact_accumulator<T>& a);

/// round_exact on the DEVICE: d_out[j] = round_exact(d_states[j]) for j < count (both device memory), one
/// thread per state on `stream`, no allocation, no synchronization: for callers whose scalars stay on the
/// device (a distributed solver rounds its all-reduced dot states there). Accepts normalized or merely
/// limb-summed states (an ncclSum of normalized states). Bitwise equal to the host round_exact.
/// Example:
///   reduce::reproducible_sum_state(d_x, n, d_state, stream);     // then, e.g., ncclAllReduce(d_state ...)
///   reduce::round_exact(d_state, 1, d_sum, stream);
template <class T>
void round_exact(const exact_accumulator<T>* d_states, int count, T* d_out, stream_t stream = nullptr);

/// The exact, normalized state of the sum of d_in[0..n) (DEVICE memory), written to *d_state (device
/// memory) on `stream`: reduce::reproducible_sum without its final rounding (same kernel, same launch
/// shape and cost; pool scratch as the other entry points). Deterministic and partition independent.
template <class T>
void reproducible_sum_state(const T* d_in, std::int64_t n, exact_accumulator<T>* d_state, stream_t stream = nullptr);
/// As above, the state copied back to the host; synchronizes `stream`.
template <class T>
exact_accumulator<T> reproducible_sum_state(const T* d_in, std::int64_t n, stream_t stream = nullptr);

namespace reference {
/// The exact, normalized state of the sum of in[0..n) (HOST memory). round_exact of it is
/// reduce::reference::reproducible_sum(in, n).
template <class T>
exact_accumulator<T> reproducible_sum_state(const T* in, std::int64_t n);
}  // namespace reference

}  // namespace reduce
