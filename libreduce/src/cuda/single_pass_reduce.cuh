// Kernel of the default device-wide reduction: one launch, grid-stride accumulation, block_reduce, and
// the last block to finish combines the per-block partials in block order (so the result does not
// depend on which block finished last).
#pragma once
#include <cstdint>

#include "reduce/cuda/block_reduce.cuh"

namespace reduce::detail {

template <int BlockThreads, class T, class Op>
__global__ void __launch_bounds__(BlockThreads)
single_pass_reduce_kernel(const T* __restrict__ in, std::int64_t n, T identity, Op op,
                          T* __restrict__ partials, unsigned int* __restrict__ done_blocks,
                          T* __restrict__ out) {
  using br = block::block_reduce<BlockThreads, T>;
  __shared__ typename br::storage tmp;
  __shared__ bool am_last;

  T acc = identity;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * BlockThreads;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * BlockThreads + threadIdx.x; i < n; i += stride)
    acc = op(acc, in[i]);
  acc = br::reduce(acc, op, tmp);

  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    __threadfence();  // publish the partial before announcing this block is done
    am_last = (atomicAdd(done_blocks, 1u) == gridDim.x - 1);
  }
  __syncthreads();
  if (!am_last) return;

  __threadfence();  // see every other block's partial
  T total = identity;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += BlockThreads) total = op(total, partials[b]);
  __syncthreads();  // tmp is reused
  total = br::reduce(total, op, tmp);
  if (threadIdx.x == 0) {
    *out = total;
    *done_blocks = 0;  // leave the workspace ready for the next call without a memset
  }
}

}  // namespace reduce::detail
