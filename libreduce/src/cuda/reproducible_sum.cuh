// Kernel of reduce::reproducible_sum: exact integer accumulation, one launch.
//
// Not built from reduce/cuda/exact_reduce.cuh's block and grid steps (the solver's exact passes are; its
// warp flush is shared): with them this 48-register tile kernel spilled 16 bytes (ptxas, float, 128 and
// 256 threads) and took 409.6 us at 2^28 floats on an H100 against 363.3 us for this one, whose block step
// adds the warps' windows into the block's limbs with shared atomics.
//
// Each thread runs an exact_window (reduce/detail/exact_window.hpp): full aligned tiles (16 floats / 8 doubles per
// thread) go through its branch-free tile pass (float: summed exactly in a double), the rest element
// by element; elements outside the window go into the block's shared limbs (rare). At the end each
// warp adds its windows with a shuffle tree and ONE lane per distinct limb offset does the shared
// atomics (256 threads adding into the same 64-bit shared limbs at once serialized into ~1000
// compare-and-swap loops, most of a ~20 us fixed cost per call). Blocks add their nonzero limbs to the global
// accumulator with 64-bit integer atomics (associative, so order-free), and the last block rounds the
// total once (exact_to_float) and zeroes the accumulator. Limb magnitudes: every digit added is
// < 2^32 (< 2^37 after a warp's sum), one per flush, so int64 limbs hold the flushes of any n < 2^31
// elements even if every element left its window.
#pragma once
#include <cstdint>

#include "reduce/cuda/exact_reduce.cuh"
#include "reduce/cuda/warp_reduce.cuh"
#include "reduce/detail/exact_sum.hpp"
#include "reduce/detail/exact_window.hpp"
#include "reduce/exact_accumulator.hpp"
#include "single_pass.cuh"

namespace reduce::detail {

// Resident threads per SM asked of the register allocator. float: 1280 (<= 48 registers: 5 blocks of
// 256; the tile pass needs 48, no spills). An H200 sweep at 2^28 floats, grid = 1..4 waves:
// 1024 threads (51 registers) 330 / 295 / 282 / 276 us, 1280: 313 / 280 / 270 / 263 us, 1536 (40
// registers, 24 bytes of spills) 321 / 292 / 287 / 287 us. double: 1024 (62 registers, no spills).
template <class T>
constexpr int reproducible_threads_per_sm = 1024;
template <>
constexpr int reproducible_threads_per_sm<float> = 1280;
// Grid: up to this many waves of resident blocks (one block per 32 KiB below that). Blocks finish
// unevenly (the slow path, the flush and the global atomics at their end), and more, shorter blocks
// fill the SMs better: 2^27 doubles 397 / 359 / 333 / 341 us at 1 / 2 / 3 / 4 waves; floats above.
// Only blocks of >= 128 KiB each, though: their fixed cost (limb init, flush, 3 barriers, global
// atomics) dominated at 2^24 floats with 2048 blocks of 32 KiB (54.1 us against 32.1 us with 528
// blocks of 127 KiB). 2^28 / 2^30 floats get 4 waves either way.
template <class T>
constexpr int reproducible_waves = 3;
template <>
constexpr int reproducible_waves<float> = 4;
constexpr std::int64_t reproducible_block_bytes = std::int64_t{128} << 10;

/// The kernel's result: the rounded sum (reduce::reproducible_sum) ...
template <class T>
__device__ void write_exact_result(const std::int64_t* limbs, unsigned flags, std::uint32_t* digits, T* out) {
  *out = exact_to_float<T>(limbs, flags, digits);
}
/// ... or the exact state itself, normalized (reduce::reproducible_sum_state). One thread, 12 / 68 limbs.
template <class T>
__device__ void write_exact_result(const std::int64_t* limbs, unsigned flags, std::uint32_t*,
                                   exact_accumulator<T>* out) {
  constexpr int L = exact_accumulator<T>::limbs;
  for (int i = 0; i < L; ++i) out->limb[i] = limbs[i];
  normalize_limbs(out->limb, L);
  out->nan = (flags & exact_nan) ? 1 : 0;
  out->pos_inf = (flags & exact_pos_inf) ? 1 : 0;
  out->neg_inf = (flags & exact_neg_inf) ? 1 : 0;
}

/// Out: T (rounded once) or exact_accumulator<T> (the exact state).
template <int Threads, class T, class Out, int ThreadsPerSm = reproducible_threads_per_sm<T>>
__global__ void __launch_bounds__(Threads, ThreadsPerSm / Threads)
reproducible_sum_kernel(const T* __restrict__ in, std::int64_t n, unsigned long long* __restrict__ global_limbs,
                        unsigned int* __restrict__ global_flags, unsigned int* __restrict__ done_blocks,
                        Out* __restrict__ out) {
  constexpr int L = exact_traits<T>::limbs;
  __shared__ unsigned long long limbs[L];
  __shared__ std::uint32_t digits[L];  // exact_to_float's scratch
  __shared__ bool am_last;
  for (int i = static_cast<int>(threadIdx.x); i < L; i += Threads) limbs[i] = 0;
  __syncthreads();

  exact_window<T> w;
  // The slow path's digits: straight into the block's limbs (rare: see exact_window.hpp).
  struct shared_sink {
    unsigned long long* l;
    __device__ void operator()(int k, long long d) const { atomicAdd(&l[k], static_cast<unsigned long long>(d)); }
  } sink{limbs};
  traverse<Threads, 4, false>(
      in, in, n, static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x),
      [&](std::int64_t, T x, T) { w.add(x, sink); },
      [&](const auto& tile) { w.add_tile(tile, sink); });

  // Warp-aggregated flush (reduce/cuda/exact_reduce.cuh's flush_warp) with shared atomics into the block's
  // limbs.
  flush_warp(w, limbs, [](unsigned long long* p, unsigned long long v) { atomicAdd(p, v); });
  const unsigned flags = w.flags;
  const unsigned block_flags = (__syncthreads_or(flags & exact_nan) ? exact_nan : 0u) |
                               (__syncthreads_or(flags & exact_pos_inf) ? exact_pos_inf : 0u) |
                               (__syncthreads_or(flags & exact_neg_inf) ? exact_neg_inf : 0u);
  // __syncthreads_or is a barrier: every flush into `limbs` is done.
  if (gridDim.x == 1) {
    if (threadIdx.x == 0)
      write_exact_result<T>(reinterpret_cast<const std::int64_t*>(limbs), block_flags, digits, out);
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
    write_exact_result<T>(reinterpret_cast<const std::int64_t*>(limbs), f, digits, out);
  }
}

}  // namespace reduce::detail
