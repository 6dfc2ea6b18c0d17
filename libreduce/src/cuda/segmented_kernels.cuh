// Kernels of the segmented reductions, binned by segment length (device code; private to libreduce:
// run_segmented in dispatch.cuh launches them).
#pragma once
#include <cstdint>

#include "reduce/cuda/block_reduce.cuh"
#include "reduce/cuda/warp_reduce.cuh"
#include "single_pass.cuh"

namespace reduce::detail {

/// Programmatic dependent launch (sm_90+; no-ops on older GPUs and when the dependent kernel was
/// launched without the attribute): the primary lets the dependent grid be scheduled early, the
/// dependent waits until the primary grid has finished and its memory is visible.
__device__ __forceinline__ void allow_dependent_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;" ::: "memory");
#endif
}
__device__ __forceinline__ void wait_for_primary_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");
#endif
}
constexpr std::int64_t segment_thread_max = 16;   // a thread per segment up to 16 elements
constexpr std::int64_t segment_warp_max = 4096;   // a warp per segment up to 4096 (128 per lane)

/// Each warp owns 32 consecutive segments. Segments of <= 16 elements: one lane each, all 16 guarded
/// loads issued at once. <= 4096: the whole warp on one segment at a time (4 loads in flight per lane),
/// then warp::reduce_to_first. Longer ones are queued for segmented_long_kernel (a block each).
template <int Threads, class T, class Op>
__global__ void __launch_bounds__(Threads)
segmented_short_kernel(const T* __restrict__ in, const std::int64_t* __restrict__ offsets,
                       std::int64_t num_segments, Op op, T identity, T* __restrict__ out,
                       std::int64_t* __restrict__ long_queue, unsigned long long* __restrict__ long_count) {
  allow_dependent_launch();  // segmented_long_kernel may be scheduled now; it waits for this grid's results
  const int lane = static_cast<int>(threadIdx.x) % warp::warp_size;
  const std::int64_t first = (static_cast<std::int64_t>(blockIdx.x) * Threads + threadIdx.x) -
                             static_cast<std::int64_t>(lane);  // first segment of this warp
  if (first >= num_segments) return;  // whole warp leaves together
  const std::int64_t seg = first + lane;
  const bool valid = seg < num_segments;
  const std::int64_t b = valid ? offsets[seg] : 0;
  const std::int64_t e = valid ? offsets[seg + 1] : 0;
  const std::int64_t len = e - b;

  if (valid && len <= segment_thread_max) {
    T v[segment_thread_max];
#pragma unroll
    for (int k = 0; k < segment_thread_max; ++k) v[k] = k < len ? in[b + k] : identity;
    T acc = identity;
#pragma unroll
    for (int k = 0; k < segment_thread_max; ++k) acc = op(acc, v[k]);
    out[seg] = acc;
  }
  // Long segments are queued with ONE atomic per warp (ballot, popc) rather than one per segment: those
  // atomics serialize on one counter inside the short kernel, whose end the long kernel waits for (1,000
  // long segments on an H200: the two kernels took 100.9 us, the long kernel alone 96.1). The queue
  // order does not enter any result (each segment is reduced on its own).
  const bool is_long = valid && len > segment_warp_max;
  const unsigned long_lanes = __ballot_sync(warp::full_mask, is_long);
  if (long_lanes) {
    const int leader = __ffs(long_lanes) - 1;
    unsigned long long base = 0;
    if (lane == leader) base = atomicAdd(long_count, static_cast<unsigned long long>(__popc(long_lanes)));
    base = __shfl_sync(warp::full_mask, base, leader);
    if (is_long) long_queue[base + static_cast<unsigned>(__popc(long_lanes & ((1u << lane) - 1u)))] = seg;
  }
  unsigned todo = __ballot_sync(warp::full_mask, valid && len > segment_thread_max && len <= segment_warp_max);
  while (todo) {
    const int src = __ffs(todo) - 1;
    todo &= todo - 1;
    const std::int64_t sb = __shfl_sync(warp::full_mask, b, src);
    const std::int64_t se = __shfl_sync(warp::full_mask, e, src);
    T acc = identity;
    for (std::int64_t i0 = sb; i0 < se; i0 += 4 * warp::warp_size) {
      T v[4];
#pragma unroll
      for (int k = 0; k < 4; ++k) {
        const std::int64_t i = i0 + k * warp::warp_size + lane;
        v[k] = i < se ? in[i] : identity;
      }
#pragma unroll
      for (int k = 0; k < 4; ++k) acc = op(acc, v[k]);
    }
    acc = warp::reduce_to_first(acc, op);
    if (lane == 0) out[first + src] = acc;
  }
}

/// Segment `seg` by the whole block (block_reduce; the result is stored by thread 0). The order of the
/// additions depends only on the segment's length.
template <int Threads, int Unroll, class T, class Op>
__device__ __forceinline__ void reduce_segment_by_block(const T* __restrict__ in, const std::int64_t* __restrict__ offsets,
                                                        Op op, T identity, T* __restrict__ out, std::int64_t seg,
                                                        typename block::block_reduce<Threads, T>::storage& tmp) {
  const std::int64_t b = offsets[seg];
  const std::int64_t len = offsets[seg + 1] - b;
  T acc = identity;
  traverse<Threads, Unroll, false>(in + b, in + b, len, 0, 1, [&](std::int64_t, T v, T) { acc = op(acc, v); });
  acc = block::block_reduce<Threads, T>::reduce(acc, op, tmp);
  if (threadIdx.x == 0) out[seg] = acc;
}

/// 4 x 16 bytes in flight per thread (2 for 64-bit types: their min/max compare-selects need more
/// registers than a full-occupancy block has).
template <class T>
constexpr int segment_block_unroll = sizeof(T) == 8 ? 2 : 4;
constexpr int segment_block_threads = 256;

/// Few segments (num_segments <= block_per_segment_max): ONE launch, a block per segment, as CUB does,
/// with no classification pass. 8 resident blocks of 256 per SM (28-32 registers, no spills), so 1,000
/// segments run in one wave. Measured on an H200, 1,000 x 100k floats: the binned path's two kernels
/// (short, then long as its programmatic dependent) took 100.9-101.8 us against CUB's 98.8-99.2,
/// since the long kernel waits for the short one; this kernel takes 92.8-94.9 (CUB 96.3-98.9).
constexpr std::int64_t block_per_segment_max = 8192;
template <int Threads, class T, class Op>
__global__ void __launch_bounds__(Threads, 2048 / Threads)
segmented_block_kernel(const T* __restrict__ in, const std::int64_t* __restrict__ offsets, Op op, T identity,
                       T* __restrict__ out) {
  __shared__ typename block::block_reduce<Threads, T>::storage tmp;
  reduce_segment_by_block<Threads, segment_block_unroll<T>>(in, offsets, op, identity, out, blockIdx.x, tmp);
}

/// A block per queued long segment (grid-stride over the queue). Launched as a programmatic dependent
/// of segmented_short_kernel (its blocks start while the short kernel runs and wait here for its
/// results); the last block to finish zeroes the queue counter, so a call needs no memset.
template <int Threads, class T, class Op>
__global__ void __launch_bounds__(Threads, 1024 / Threads)
segmented_long_kernel(const T* __restrict__ in, const std::int64_t* __restrict__ offsets, Op op, T identity,
                      T* __restrict__ out, const std::int64_t* __restrict__ long_queue,
                      unsigned long long* __restrict__ long_count, unsigned int* __restrict__ done_blocks) {
  using br = block::block_reduce<Threads, T>;
  __shared__ typename br::storage tmp;
  wait_for_primary_grid();
  const auto count = static_cast<std::int64_t>(*long_count);
  for (std::int64_t q = blockIdx.x; q < count; q += gridDim.x) {
    reduce_segment_by_block<Threads, segment_block_unroll<T>>(in, offsets, op, identity, out, long_queue[q], tmp);
    __syncthreads();  // tmp is reused by the next segment
  }
  // Every thread of this block has read *long_count (this barrier); the last block of the grid resets
  // both counters for the next call.
  __syncthreads();
  if (threadIdx.x == 0) {
    __threadfence();
    if (atomicAdd(done_blocks, 1u) == gridDim.x - 1) {
      *long_count = 0;
      *done_blocks = 0;
    }
  }
}

}  // namespace reduce::detail
