// Block-level reductions: warp -> shared memory -> warp, built on warp_reduce.cuh.
// Header-only device code: no allocation, no launches; the caller provides the shared storage.
#pragma once
#include "reduce/cuda/warp_reduce.cuh"

namespace reduce::block {

/// Reduction over a 1-D thread block of `BlockThreads` threads (a multiple of 32, at most 1024), which
/// must equal blockDim.x. Usage:
///   using br = reduce::block::block_reduce<256, float>;
///   __shared__ br::storage tmp;
///   float total = br::reduce(v, reduce::plus{}, tmp);   // valid in thread 0
/// Deterministic: lanes, then warps, are combined in a fixed order.
template <int BlockThreads, class T>
struct block_reduce {
  static_assert(BlockThreads % warp::warp_size == 0 && BlockThreads >= 32 && BlockThreads <= 1024,
                "block size must be a multiple of 32 in [32, 1024]");
  static constexpr int warps = BlockThreads / warp::warp_size;

  struct storage {
    T warp_partials[warps];
    T result;  // for all_reduce's broadcast
  };

  /// Every thread passes one value; the result is valid in thread 0 only. Contains __syncthreads():
  /// all threads of the block must call it. Reusing `tmp` right after needs a __syncthreads().
  template <class Op>
  __device__ __forceinline__ static T reduce(T v, Op op, storage& tmp) {
    const int lane = static_cast<int>(threadIdx.x) % warp::warp_size;
    const int w = static_cast<int>(threadIdx.x) / warp::warp_size;
    v = warp::reduce_to_first(v, op);
    if constexpr (warps == 1) {
      return v;
    } else {
      if (lane == 0) tmp.warp_partials[w] = v;
      __syncthreads();
      if (w == 0) {
        v = tmp.warp_partials[lane < warps ? lane : 0];
        v = warp::reduce_to_first(v, op, warps);
      }
      return v;
    }
  }

  /// As reduce(), but every thread of the block gets the result (one more barrier).
  template <class Op>
  __device__ __forceinline__ static T all_reduce(T v, Op op, storage& tmp) {
    v = reduce(v, op, tmp);
    if (threadIdx.x == 0) tmp.result = v;
    __syncthreads();
    v = tmp.result;
    __syncthreads();  // so tmp may be reused at once
    return v;
  }
};

}  // namespace reduce::block
