// Kernel of reduce::reproducible_sum: exact integer accumulation (exact_sum.hpp), one launch.
//
// Per element (about 25 integer instructions, under the ~26 per element an H200 can issue while
// streaming floats at 4.8 TB/s): decompose x into +-m << p, add it into a per-thread 128-bit
// two's-complement WINDOW whose least significant bit is 2^(base + lsb_exp), base a multiple of 32,
// when p - base is in [0, 64) (mantissa << t stays below 2^88 for float, 2^117 for double, so the
// window holds 2^39 floats or 2^10 doubles: doubles flush every 512). An element outside the window
// flushes the window into the block's shared limbs (four shared 64-bit atomics) and re-centres it
// 32..63 bits below the element, so data spanning < 2^32 in magnitude rarely flushes.
// At the end each block adds its nonzero limbs to the global accumulator with 64-bit integer atomics
// (associative, so order-free), and the last block rounds the total once and zeroes the accumulator.
#pragma once
#include <cstdint>

#include "exact_sum.hpp"
#include "reduce/cuda/single_pass.cuh"

namespace reduce::detail {

template <int Threads, class T>
__global__ void __launch_bounds__(Threads)
reproducible_sum_kernel(const T* __restrict__ in, std::int64_t n, unsigned long long* __restrict__ global_limbs,
                        unsigned int* __restrict__ global_flags, unsigned int* __restrict__ done_blocks,
                        T* __restrict__ out) {
  using tr = exact_traits<T>;
  constexpr int L = tr::limbs;
  constexpr int flush_every = sizeof(T) == 8 ? 512 : 0;
  __shared__ unsigned long long limbs[L];
  __shared__ std::uint32_t digits[L];  // exact_to_float's scratch
  __shared__ bool am_last;
  for (int i = static_cast<int>(threadIdx.x); i < L; i += Threads) limbs[i] = 0;
  __syncthreads();

  unsigned __int128 acc = 0;
  int base = -1;  // no window yet
  int count = 0;
  unsigned flags = 0;
  auto flush = [&]() {
    if (acc != 0) {
      const int k = base >> 5;
      const auto lo = static_cast<std::uint64_t>(acc);
      const auto hi = static_cast<std::uint64_t>(acc >> 64);
      atomicAdd(&limbs[k], lo & 0xffffffffull);
      atomicAdd(&limbs[k + 1], lo >> 32);
      atomicAdd(&limbs[k + 2], hi & 0xffffffffull);
      // the top 32 bits carry the sign: sign-extend to 64 bits
      atomicAdd(&limbs[k + 3], static_cast<unsigned long long>(
                                   static_cast<long long>(static_cast<std::int32_t>(static_cast<std::uint32_t>(hi >> 32)))));
    }
    acc = 0;
    count = 0;
  };
  traverse<Threads, 4, false>(in, in, n, static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x),
                              [&](std::int64_t, T x, T) {
                                std::uint64_t m;
                                int p;
                                bool neg;
                                if (!decompose(x, m, p, neg, flags)) return;
                                int t = p - base;
                                if (base < 0 || t < 0 || t >= 64) {
                                  flush();
                                  base = (p & ~31) - 32 > 0 ? (p & ~31) - 32 : 0;
                                  t = p - base;
                                }
                                const std::uint64_t lo = m << t;
                                const std::uint64_t hi = (m >> 1) >> (63 - t);
                                unsigned __int128 v = (static_cast<unsigned __int128>(hi) << 64) | lo;
                                if (neg) v = -v;
                                acc += v;
                                if constexpr (flush_every > 0) {
                                  if (++count == flush_every) flush();
                                }
                              });
  flush();
  const unsigned block_flags = (__syncthreads_or(flags & exact_nan) ? exact_nan : 0u) |
                               (__syncthreads_or(flags & exact_pos_inf) ? exact_pos_inf : 0u) |
                               (__syncthreads_or(flags & exact_neg_inf) ? exact_neg_inf : 0u);
  // __syncthreads_or is a barrier: every flush into `limbs` is done.
  if (gridDim.x == 1) {
    if (threadIdx.x == 0) *out = exact_to_float<T>(reinterpret_cast<const std::int64_t*>(limbs), block_flags, digits);
    return;
  }
  for (int i = static_cast<int>(threadIdx.x); i < L; i += Threads)
    if (limbs[i] != 0) atomicAdd(&global_limbs[i], limbs[i]);
  __syncthreads();
  if (threadIdx.x == 0) {
    if (block_flags) atomicOr(global_flags, block_flags);
    __threadfence();
    am_last = (atomicAdd(done_blocks, 1u) == gridDim.x - 1);
  }
  __syncthreads();
  if (!am_last) return;
  __threadfence();
  for (int i = static_cast<int>(threadIdx.x); i < L; i += Threads) {
    limbs[i] = __ldcg(&global_limbs[i]);
    global_limbs[i] = 0;  // ready for the next call
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    const unsigned f = __ldcg(global_flags);
    *global_flags = 0;
    *done_blocks = 0;
    *out = exact_to_float<T>(reinterpret_cast<const std::int64_t*>(limbs), f, digits);
  }
}

}  // namespace reduce::detail
