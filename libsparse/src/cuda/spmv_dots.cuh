// spmv_dots's three sums x.y, y.w, y.y: the per-thread terms, the block and last-block finish that every
// spmv_dots kernel ends with, and the separate dots pass that follows the SpMV of the plans that do not
// fuse them (every algorithm but stencil, whose kernel runs the same epilogue: spmv_row_kernels.cuh).
// Device code only; dispatch in spmv.cu.
//
// fast: each thread adds its rows' terms in row order, the block adds its threads' sums through
// reduce::block::block_reduce (libreduce's fixed tree), and the last block to finish adds the per-block
// partials (thread t: blocks t, t + Block, ..., then the same tree). No value passes through an atomic, so
// for a fixed grid the sums are bitwise the same run to run.
// exact (dots_summation::exact): each term rounded to Value and summed exactly with the pieces of
// reduce/cuda/exact_reduce.cuh: float into a double run per sum (add_staged: exact while the double sum
// is, the block's limbs taking what would round; the block's runs merged by end_block), double into a
// wide window per sum (thread_sum: a thread's rows of a solver's vectors span many magnitudes); then the
// grid's exact step and one rounding per sum in the last block: integer sums, the same bits on any grid.
#pragma once
#include <cstdint>
#include <type_traits>

#include "gpukit/grid_dependency.cuh"
#include "reduce/cuda/block_reduce.cuh"
#include "reduce/cuda/exact_reduce.cuh"
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
/// launch, ticket is 0 between calls (the last block resets it), sums gets the 3 results. The exact sums'
/// global accumulator (reduce::exact::end_grid's): exact_limb 3 * exact::limbs<Value> words, exact_flags 3
/// words and then its ticket, all zero between calls (every call leaves them zero).
template <class Value>
struct dots_args {
  const Value* w;
  double* partials;
  unsigned* ticket;
  double* sums;
  unsigned long long* exact_limb;
  unsigned* exact_flags;
  bool accumulate;  ///< fast sums: added to sums' values (dots_store::accumulate) instead of written
};

/// Which sums a row kernel takes: none (plain spmv), or spmv_dots's fast or exact ones.
enum class dots_kind { none, fast, exact };

/// A thread's exact sums (dots_kind::exact): three wide windows; for float a run each instead
/// (reduce::exact::add_staged: the terms summed in a double while that stays exact, the block's limbs
/// taking what would round; the block's runs merged by reduce::exact::end_block). A block's sums in
/// exact_block().
template <class Value>
struct exact_dot3 {
  reduce::exact::thread_sum<Value, true> t[3];
};
template <>
struct exact_dot3<float> {
  reduce::exact::float_run run[3];
};
template <class Value>
using block_exact_dot3 = reduce::exact::block_sums<Value, 3, 256>;
/// The block's exact sums, in shared memory (one object per block for every caller of this function).
template <class Value>
__device__ __forceinline__ block_exact_dot3<Value>& exact_block() {
  __shared__ block_exact_dot3<Value> s;
  return s;
}

/// The accumulator of a kind: dot3 (fast; none keeps an unused one) or exact_dot3.
template <dots_kind Kind, class Value>
using dots_acc = std::conditional_t<Kind == dots_kind::exact, exact_dot3<Value>, dot3>;

/// Before the row loop, in every thread of the block (exact: begin_block's barrier).
template <int Block, class Value>
__device__ __forceinline__ void start_dots(dot3& acc) {
  acc = dot3{{0.0, 0.0, 0.0}};
}
template <int Block, class Value>
__device__ __forceinline__ void start_dots(exact_dot3<Value>& acc) {
  static_assert(Block == 256, "block_exact_dot3 is laid out for 256 threads");
  if constexpr (std::is_same_v<Value, float>) reduce::exact::begin_block<Block>(exact_block<Value>());
  else reduce::exact::begin_block<Block>(exact_block<Value>(), acc.t);
}

/// Row i's terms added to `acc`, each product formed in double (exact for float inputs: 24 + 24
/// significand bits fit double's 53); exact: rounded to Value first (reduce::reproducible_sum of the
/// rounded terms), added as one-term tiles (a window opens inline at the first term, no out-of-line call).
template <class Value>
__device__ __forceinline__ void add_terms(dot3& acc, Value xi, Value yi, Value wi) {
  const double x = xi, y = yi, w = wi;
  acc.v[0] += x * y;
  acc.v[1] += y * w;
  acc.v[2] += y * y;
}
/// A row's three terms rounded to Value (exact): made when the row's y is stored, added (add_rounded) where
/// the adds' ~100 integer instructions hide behind the next row's loads (the stencil kernel).
template <class Value>
struct rounded_terms {
  Value t[3][1];  // zeros add nothing (and open no window)
};
template <class Value>
__device__ __forceinline__ rounded_terms<Value> round_terms(Value xi, Value yi, Value wi) {
  using reduce::exact::product;  // multiplied in Value: no 64-bit conversions (exact_reduce.cuh)
  return {{{product(xi, yi)}, {product(yi, wi)}, {product(yi, yi)}}};
}
template <class Value>
__device__ __forceinline__ void add_rounded(exact_dot3<Value>& acc, const rounded_terms<Value>& r) {
#pragma unroll
  for (int j = 0; j < 3; ++j) {
    if constexpr (std::is_same_v<Value, float>) reduce::exact::add_staged(acc.run[j], r.t[j][0], exact_block<Value>(), j);
    else acc.t[j].add_tile(r.t[j]);
  }
}
template <class Value>
__device__ __forceinline__ void add_terms(exact_dot3<Value>& acc, Value xi, Value yi, Value wi) {
  add_rounded(acc, round_terms(xi, yi, wi));
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
    for (int j = 0; j < 3; ++j) out.sums[j] = out.accumulate ? out.sums[j] + acc.v[j] : acc.v[j];
  }
}
/// exact: the block's and the grid's exact steps; the last block's threads 0..2 round one sum each.
template <int Block, class Value>
__device__ __forceinline__ void finish_dots(exact_dot3<Value>& acc, const dots_args<Value>& out) {
  auto& s = exact_block<Value>();
  if constexpr (std::is_same_v<Value, float>) reduce::exact::end_block<Block>(acc.run, s);
  else reduce::exact::end_block<Block>(acc.t, s);
  if (!reduce::exact::end_grid<Block>(s, out.exact_limb, out.exact_flags, out.exact_flags + 3)) return;
  const int j = static_cast<int>(threadIdx.x);
  if (j < 3) out.sums[j] = static_cast<double>(reduce::exact::round(s, j));
}

/// The dots pass of the plans that do not fuse it: x, y and w read once each (n entries), grid-stride.
template <int Block, dots_kind Kind, class Value>
__global__ void __launch_bounds__(Block)
spmv_dots_kernel(std::int64_t n, const Value* __restrict__ x, const Value* __restrict__ y, dots_args<Value> out) {
  static_assert(Kind != dots_kind::none, "a dots pass takes sums");
  dots_acc<Kind, Value> acc;
  start_dots<Block, Value>(acc);
  gpukit::wait_for_prior_grids();  // launched with PDL (spmv.cu): after the SpMV that writes y
  gpukit::allow_dependent_grids();
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * Block;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * Block + threadIdx.x; i < n; i += stride)
    add_terms(acc, x[i], y[i], out.w[i]);
  finish_dots<Block>(acc, out);
}

}  // namespace sparse::detail
