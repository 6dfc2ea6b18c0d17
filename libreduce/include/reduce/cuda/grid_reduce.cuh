// Grid-level reductions in ONE launch: each block hands its total to the block that finishes last, which
// combines them. Built on block_reduce.cuh. Header-only device code: no allocation, no launches; the
// caller provides the per-block partials and the ticket counter (device memory).
#pragma once
#include <cstring>
#include <type_traits>

#include "reduce/cuda/block_reduce.cuh"

namespace reduce::grid {

/// *p read through L2 (__ldcg word by word: another block wrote it this launch, so L1 may be stale). T is
/// trivially copyable, its size a multiple of 4 bytes (8 where it is 8-aligned: sums of doubles).
template <class T>
__device__ __forceinline__ T load_through_l2(const T* p) {
  static_assert(sizeof(T) % 4 == 0, "load_through_l2 reads 4- or 8-byte words");
  using word = std::conditional_t<alignof(T) >= 8 && sizeof(T) % 8 == 0, unsigned long long, unsigned>;
  constexpr int words = static_cast<int>(sizeof(T) / sizeof(word));
  word w[words];
  const word* src = reinterpret_cast<const word*>(p);
#pragma unroll
  for (int i = 0; i < words; ++i) w[i] = __ldcg(src + i);
  T out;
  memcpy(&out, w, sizeof(T));
  return out;
}

/// The end of a one-launch grid reduction over a 1-D grid of `BlockThreads`-thread blocks. Every thread of
/// every block calls it (it holds barriers) with the block's total in thread 0 (as block_reduce returns
/// it); thread 0 stores it to partials[blockIdx.x] and takes a ticket. The block that takes the last
/// ticket returns true in all its threads, with the grid's total in thread 0's `v`: it adds the partials
/// in a fixed order (thread t: blocks t, t + BlockThreads, ..., then block_reduce's tree), so the result
/// is bitwise the same run to run for a fixed grid, and resets *ticket to 0 for the next launch. The
/// other blocks return false (their `v` unchanged). `partials` holds gridDim.x values; *ticket is 0
/// before the launch; `tmp` may be the storage the block total came from (reused after a barrier).
/// The fences order each partial before its ticket, and the last ticket before the partials' reads
/// (through L2: __ldcg).
/// Usage:
///   using br = reduce::block::block_reduce<256, double>;
///   __shared__ br::storage tmp;
///   double v = br::reduce(mine, reduce::plus{}, tmp);
///   if (reduce::grid::last_block_reduce<256>(v, reduce::plus{}, 0.0, partials, ticket, tmp) && threadIdx.x == 0)
///     *out = v;
template <int BlockThreads, class T, class Op>
__device__ __forceinline__ bool last_block_reduce(T& v, Op op, T identity, T* partials, unsigned* ticket,
                                                  typename block::block_reduce<BlockThreads, T>::storage& tmp) {
  __shared__ bool is_last;
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = v;
    __threadfence();  // the partial is visible before the ticket is taken
    is_last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return false;
  __threadfence();
  T total = identity;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += BlockThreads) total = op(total, load_through_l2(partials + b));
  __syncthreads();  // tmp may still be in use by the caller's block total
  total = block::block_reduce<BlockThreads, T>::reduce(total, op, tmp);
  if (threadIdx.x == 0) {
    v = total;
    *ticket = 0;  // ready for the next launch
  }
  return true;
}

}  // namespace reduce::grid
