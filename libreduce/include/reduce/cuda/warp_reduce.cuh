// Warp-level reductions: the toolkit's one shuffle tree (the teaching ladder in src/ladder keeps its own
// rungs on purpose). Header-only device code: no allocation, no launches, no shared memory.
#pragma once
#include <cstring>
#include <type_traits>

#include "reduce/operators.hpp"

namespace reduce::warp {

constexpr int warp_size = 32;
constexpr unsigned full_mask = 0xffffffffu;

namespace detail {
/// `v` moved as 32-bit words through shfl(word) (the hardware shuffles 32 bits; CUDA's overloads split
/// 64-bit types the same way): any trivially copyable T, e.g. argmax's {value, index}.
template <class T, class Shfl>
__device__ __forceinline__ T shuffle_words(const T& v, Shfl shfl) {
  static_assert(std::is_trivially_copyable_v<T>);
  constexpr int words = (sizeof(T) + 3) / 4;
  unsigned w[words] = {};
  std::memcpy(w, &v, sizeof(T));
#pragma unroll
  for (int i = 0; i < words; ++i) w[i] = shfl(w[i]);
  T out;
  std::memcpy(&out, w, sizeof(T));
  return out;
}
/// __shfl_xor_sync / __shfl_down_sync for any trivially copyable T. The lambdas capture by value: by
/// reference, nvcc ordered the PTX of argmin/argmax's {value, index} shuffles differently.
template <class T>
__device__ __forceinline__ T shfl_xor(unsigned mask, const T& v, int lane_mask, int width) {
  if constexpr (std::is_arithmetic_v<T>) return __shfl_xor_sync(mask, v, lane_mask, width);
  else return shuffle_words(v, [=](unsigned w) { return __shfl_xor_sync(mask, w, lane_mask, width); });
}
template <class T>
__device__ __forceinline__ T shfl_down(unsigned mask, const T& v, unsigned delta, int width) {
  if constexpr (std::is_arithmetic_v<T>) return __shfl_down_sync(mask, v, delta, width);
  else return shuffle_words(v, [=](unsigned w) { return __shfl_down_sync(mask, w, delta, width); });
}
}  // namespace detail

/// Reduces `v` over each group of `Width` consecutive lanes (Width in 1, 2, 4, 8, 16, 32).
/// Result: in EVERY lane of the group (butterfly on __shfl_xor_sync). For a commutative operator every
/// lane computes op(a, b) or op(b, a) at each step, so all lanes hold bitwise the same value.
/// All lanes named in `mask` must call it together (no divergence inside a group).
/// Deterministic: the combination order is fixed by the lane numbering.
template <int Width = warp_size, class T, class Op>
__device__ __forceinline__ T all_reduce(T v, Op op, unsigned mask = full_mask) {
  static_assert(Width >= 1 && Width <= warp_size && (warp_size % Width) == 0,
                "Width must divide the warp: 1, 2, 4, 8, 16 or 32");
#pragma unroll
  for (int offset = Width / 2; offset > 0; offset /= 2) v = op(v, detail::shfl_xor(mask, v, offset, Width));
  return v;
}

/// Reduces the first `valid` lanes' values of each group of `Width` lanes (1 <= valid <= Width) without
/// needing an identity element: lanes at or past `valid` contribute nothing.
/// Result: in the group's FIRST lane only (tree on __shfl_down_sync); other lanes hold partial values.
/// Deterministic (fixed order).
template <int Width = warp_size, class T, class Op>
__device__ __forceinline__ T reduce_to_first(T v, Op op, int valid = Width, unsigned mask = full_mask) {
  static_assert(Width >= 1 && Width <= warp_size && (warp_size % Width) == 0,
                "Width must divide the warp: 1, 2, 4, 8, 16 or 32");
  const int lane = static_cast<int>(threadIdx.x) % Width;
#pragma unroll
  for (int offset = Width / 2; offset > 0; offset /= 2) {
    const T other = detail::shfl_down(mask, v, static_cast<unsigned>(offset), Width);
    if (lane + offset < valid) v = op(v, other);
  }
  return v;
}

/// Sum over each group of Width lanes; all lanes get it. Shorthand for all_reduce with plus.
template <int Width = warp_size, class T>
__device__ __forceinline__ T sum(T v, unsigned mask = full_mask) { return all_reduce<Width>(v, plus{}, mask); }

/// Maximum over each group of Width lanes; all lanes get it (NaN propagates).
template <int Width = warp_size, class T>
__device__ __forceinline__ T max(T v, unsigned mask = full_mask) { return all_reduce<Width>(v, maximum{}, mask); }

}  // namespace reduce::warp
