// Kernel of reduce::reproducible_sum: exact integer accumulation, one launch.
//
// Built from reduce/cuda/exact_reduce.cuh's pieces. Each thread runs an exact window
// (reduce/detail/exact_window.hpp): full aligned tiles (16 floats / 8 doubles per thread) go through its
// branch-free tile pass (float: summed exactly in a double), the rest element by element; elements outside
// the window go into the block's shared limbs (rare). Warps then add their windows into the block's limbs,
// blocks add theirs to the global accumulator with 64-bit integer atomics (associative, so order-free),
// and the last block rounds the total once (exact_to_float) and zeroes the accumulator.
#pragma once
#include <cstdint>

#include "reduce/cuda/exact_reduce.cuh"
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

/// The kernel's result: the rounded sum (reduce::reproducible_sum) or the exact state itself, normalized
/// (reduce::reproducible_sum_state). One thread.
template <class T, int Block>
__device__ void write_exact_result(exact::block_sums<T, 1, Block>& s, T* out) {
  *out = exact::round(s, 0);
}
template <class T, int Block>
__device__ void write_exact_result(exact::block_sums<T, 1, Block>& s, exact_accumulator<T>* out) {
  exact::state(s, 0, out);
}

/// Out: T (rounded once) or exact_accumulator<T> (the exact state). Built from reduce/cuda/exact_reduce.cuh's
/// thread, block and grid pieces; `global_limbs`, `global_flags` and `done_blocks` are its accumulator.
template <int Threads, class T, class Out, int ThreadsPerSm = reproducible_threads_per_sm<T>>
__global__ void __launch_bounds__(Threads, ThreadsPerSm / Threads)
reproducible_sum_kernel(const T* __restrict__ in, std::int64_t n, unsigned long long* __restrict__ global_limbs,
                        unsigned int* __restrict__ global_flags, unsigned int* __restrict__ done_blocks,
                        Out* __restrict__ out) {
  __shared__ exact::block_sums<T, 1, Threads> s;
  exact::thread_sum<T> t[1];
  exact::begin_block<Threads>(s, t);
  traverse<Threads, 4, false>(
      in, in, n, static_cast<int>(blockIdx.x), static_cast<int>(gridDim.x),
      [&](std::int64_t, T x, T) { t[0].add(x); }, [&](const auto& tile) { t[0].add_tile(tile); });
  exact::end_block<Threads>(t, s);
  if (!exact::end_grid<Threads>(s, global_limbs, global_flags, done_blocks)) return;
  if (threadIdx.x == 0) write_exact_result(s, out);
}

}  // namespace reduce::detail
