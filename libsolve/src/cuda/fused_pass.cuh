// The one kernel shape every solver step is made of: a grid-stride pass over the n entries of a few vectors
// that updates them and yields K per-entry terms (products), whose K sums are reduced in the same launch:
// per thread in index order, per block through reduce::block::block_reduce (libreduce's one shuffle tree),
// then across blocks by the LAST block to finish (a ticket counter), which adds the per-block partials in
// block order and hands the K sums to the step's finish(), run by one thread: the scalar update (alpha,
// beta, the stopping test). Deterministic for a fixed grid: no value is ever combined through an atomic.
//
// A step ("op") is a trivially copyable struct of device pointers:
//   static constexpr int k;                    number of sums (0: a plain update, map_pass)
//   static constexpr bool gated;               skip the pass once the iteration has stopped
//   __device__ void load(const solver_state&); read its scalars once per thread
//   __device__ void operator()(i, double (&t)[k]) const;   update entry i, write its terms
//   __device__ void finish(const double* sums, solver_state* st) const;
// The reproducible mode runs the same op through store_terms (the terms rounded to Value into a temporary),
// reduce::reproducible_sum per term, and finish_terms.
#pragma once
#include <cstdint>

#include "reduce/cuda/block_reduce.cuh"
#include "solver_state.hpp"

namespace solve::detail {

template <int K>
struct sums {
  double v[K];
};

struct add_sums {
  template <int K>
  __device__ __forceinline__ sums<K> operator()(const sums<K>& a, const sums<K>& b) const {
    sums<K> c;
#pragma unroll
    for (int j = 0; j < K; ++j) c.v[j] = a.v[j] + b.v[j];
    return c;
  }
};

/// SpansRanks (an operator over several ranks): the last block writes the K totals to `totals` instead of
/// running finish(); the sum over ranks and finish_sums follow. false: `totals` is unused.
template <int Block, class Op, bool SpansRanks = false>
__global__ void __launch_bounds__(Block) fused_pass(Op op, std::int64_t n, solver_state* st, sums<Op::k>* partials,
                                                    double* totals = nullptr) {
  constexpr int K = Op::k;
  if (Op::gated && st->status != status_running) return;
  op.load(*st);
  sums<K> acc;
#pragma unroll
  for (int j = 0; j < K; ++j) acc.v[j] = 0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * Block;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * Block + threadIdx.x; i < n; i += stride) {
    double t[K];
    op(i, t);
#pragma unroll
    for (int j = 0; j < K; ++j) acc.v[j] += t[j];
  }
  using block_sum = reduce::block::block_reduce<Block, sums<K>>;
  __shared__ typename block_sum::storage tmp;
  __shared__ bool is_last;
  acc = block_sum::reduce(acc, add_sums{}, tmp);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = acc;
    __threadfence();  // the partial is visible before the ticket is taken
    is_last = atomicAdd(&st->ticket, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!is_last) return;
  __threadfence();
  sums<K> total;
#pragma unroll
  for (int j = 0; j < K; ++j) total.v[j] = 0;
  for (unsigned b = threadIdx.x; b < gridDim.x; b += Block)
#pragma unroll
    for (int j = 0; j < K; ++j) total.v[j] += __ldcg(&partials[b].v[j]);  // L2: other blocks' writes
  __syncthreads();  // tmp is reused
  total = block_sum::reduce(total, add_sums{}, tmp);
  if (threadIdx.x == 0) {
    st->ticket = 0;  // ready for the next pass
    if constexpr (SpansRanks) {
#pragma unroll
      for (int j = 0; j < K; ++j) totals[j] = total.v[j];
    } else {
      op.finish(total.v, st);
    }
  }
}

/// SpansRanks, after the sum over ranks: the op's finish on the global totals (one thread).
template <class Op>
__global__ void finish_sums(Op op, solver_state* st, const double* totals) {
  if (Op::gated && st->status != status_running) return;
  double s[Op::k];
#pragma unroll
  for (int j = 0; j < Op::k; ++j) s[j] = totals[j];
  op.finish(s, st);
}

/// A step without sums: only the updates.
template <int Block, class Op>
__global__ void __launch_bounds__(Block) map_pass(Op op, std::int64_t n, const solver_state* st) {
  if (Op::gated && st->status != status_running) return;
  op.load(*st);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * Block;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * Block + threadIdx.x; i < n; i += stride) op(i);
}

/// Reproducible mode, first half: the updates, and each term rounded to Value into terms[j * n + i].
template <int Block, class Op, class Value>
__global__ void __launch_bounds__(Block) store_terms(Op op, std::int64_t n, const solver_state* st, Value* terms) {
  constexpr int K = Op::k;
  if (Op::gated && st->status != status_running) return;
  op.load(*st);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * Block;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * Block + threadIdx.x; i < n; i += stride) {
    double t[K];
    op(i, t);
#pragma unroll
    for (int j = 0; j < K; ++j) terms[j * n + i] = static_cast<Value>(t[j]);
  }
}

/// Reproducible mode, second half (after reduce::reproducible_sum of each term): the op's finish.
template <class Op, class Value>
__global__ void finish_terms(Op op, solver_state* st, const Value* term_sums) {
  if (Op::gated && st->status != status_running) return;
  double s[Op::k];
#pragma unroll
  for (int j = 0; j < Op::k; ++j) s[j] = static_cast<double>(term_sums[j]);
  op.finish(s, st);
}

}  // namespace solve::detail
