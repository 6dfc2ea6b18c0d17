// spmv_dots's three sums x.y, y.w, y.y: the per-thread terms, the block and last-block finish that every
// spmv_dots kernel ends with, and the separate dots pass that follows the SpMV of the plans that do not
// fuse them (every algorithm but stencil, whose kernel runs the same epilogue: spmv_row_kernels.cuh).
// Device code only; dispatch in spmv.cu.
//
// Order, hence determinism: each thread adds its rows' terms in row order, the block adds its threads'
// sums through reduce::block::block_reduce (libreduce's fixed tree), and the last block to finish adds
// the per-block partials (thread t: blocks t, t + Block, ..., then the same tree). No value passes
// through an atomic, so for a fixed grid the sums are bitwise the same run to run.
#pragma once
#include <cstdint>

#include "gpukit/grid_dependency.cuh"
#include "reduce/cuda/block_reduce.cuh"
#include "reduce/cuda/grid_reduce.cuh"

namespace sparse::detail {

/// The three sums, or one thread's or block's share of them: v[0] = x.y, v[1] = y.w, v[2] = y.y.
/// No member initialisers: block_reduce keeps an array of them in shared memory.
struct dot3 {
  double v[3];
};

struct add_dot3 {
  __device__ __forceinline__ dot3 operator()(const dot3& a, const dot3& b) const {
    return {{a.v[0] + b.v[0], a.v[1] + b.v[1], a.v[2] + b.v[2]}};
  }
};

/// Where a spmv_dots kernel reads w and leaves its sums: partials holds 3 doubles per block of the
/// launch, ticket is 0 between calls (the last block resets it), sums gets the 3 results.
template <class Value>
struct dots_args {
  const Value* w;
  double* partials;
  unsigned* ticket;
  double* sums;
};

/// Row i's terms added to `acc`, each product formed in double (exact for float inputs: 24 + 24
/// significand bits fit double's 53).
template <class Value>
__device__ __forceinline__ void add_terms(dot3& acc, Value xi, Value yi, Value wi) {
  const double x = xi, y = yi, w = wi;
  acc.v[0] += x * y;
  acc.v[1] += y * w;
  acc.v[2] += y * y;
}

/// The end of every spmv_dots kernel; EVERY thread of the block must reach it (it has barriers): the
/// block's sums through block_reduce, then reduce::grid::last_block_reduce (the last block to finish adds
/// every block's partial in a fixed order and resets the ticket for the next call), whose thread 0
/// writes the three sums.
template <int Block, class Value>
__device__ __forceinline__ void finish_dots(dot3 acc, const dots_args<Value>& out) {
  using block_sum = reduce::block::block_reduce<Block, dot3>;
  __shared__ typename block_sum::storage tmp;
  acc = block_sum::reduce(acc, add_dot3{}, tmp);
  auto* partials = reinterpret_cast<dot3*>(out.partials);  // 3 doubles per block, the same layout
  if (!reduce::grid::last_block_reduce<Block>(acc, add_dot3{}, dot3{{0.0, 0.0, 0.0}}, partials, out.ticket, tmp)) return;
  if (threadIdx.x == 0) {
#pragma unroll
    for (int j = 0; j < 3; ++j) out.sums[j] = acc.v[j];
  }
}

/// The dots pass of the plans that do not fuse it: x, y and w read once each (n entries), grid-stride.
template <int Block, class Value>
__global__ void __launch_bounds__(Block)
spmv_dots_kernel(std::int64_t n, const Value* __restrict__ x, const Value* __restrict__ y, dots_args<Value> out) {
  gpukit::wait_for_prior_grids();  // launched with PDL (spmv.cu): after the SpMV that writes y
  gpukit::allow_dependent_grids();
  dot3 acc{{0.0, 0.0, 0.0}};
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * Block;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * Block + threadIdx.x; i < n; i += stride)
    add_terms(acc, x[i], y[i], out.w[i]);
  finish_dots<Block>(acc, out);
}

}  // namespace sparse::detail
