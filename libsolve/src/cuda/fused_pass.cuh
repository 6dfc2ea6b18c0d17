// The one kernel shape every solver step is made of: a grid-stride pass over the n entries of a few vectors
// that updates them and yields K per-entry terms (products), whose K sums are reduced in the same launch:
// per thread in index order, per block through reduce::block::block_reduce (libreduce's one shuffle tree),
// then across blocks by reduce::grid::last_block_reduce (the LAST block to finish adds the per-block
// partials in a fixed order) and hands the K sums to the step's finish(), run by one thread: the scalar
// update (alpha, beta, the stopping test). Deterministic for a fixed grid: no value is ever combined
// through an atomic.
//
// A step ("op") is a trivially copyable struct of device pointers:
//   static constexpr int k;                    number of sums (0: a plain update, map_pass)
//   static constexpr bool gated;               skip the pass once the iteration has stopped
//   __device__ void load(const solver_state&); read its scalars once per thread
//   __device__ void operator()(i, double (&t)[k]) const;   update entry i, write its terms
//   __device__ void finish(const double* sums, solver_state* st) const;
// or, for the steps of the hot loops (cg, pcg, pipecg), the vectorized form instead of operator():
//   static constexpr bool vectorized = true;
//   template <int W> __device__ void accumulate(i, double (&acc)[k]) const;
//        update entries i .. i+W-1, reading and writing each vector with one W-wide access (lanes below),
//        and add their terms to acc in entry order;
//   bool aligned(std::size_t bytes) const;     (host) whether every vector it touches is that aligned.
// Why: a scalar op stores to r[i] before the next entry's loads, and the compiler cannot move those loads
// above stores that may alias, so each thread has one entry's loads in flight. 16-byte accesses carry 4
// floats per load. H200, 3D Poisson 160^3 float (solve bench, per iteration): pcg 129.6 -> 111.3 us,
// pipecg 138.9 -> 128.4, cg 107.3 -> 104.1; cg's step pass alone 40.9 -> 33.0 us (2.8 -> 3.5 TB/s).
// The reproducible mode runs the same op through store_terms (the terms rounded to Value into a temporary),
// reduce::reproducible_sum per term, and finish_terms.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gpukit/grid_dependency.cuh"
#include "reduce/cuda/block_reduce.cuh"
#include "reduce/cuda/grid_reduce.cuh"
#include "solver_state.hpp"

namespace solve::detail {

/// W consecutive entries of a vector, read or written with ONE access of W * sizeof(V) bytes (16: LDG.128 /
/// STG.128) when the address is that aligned (the host checks, see aligned()).
template <class V, int W>
struct alignas(W * sizeof(V)) lanes {
  V v[W];
};
template <int W, class V>
__device__ __forceinline__ lanes<V, W> load(const V* p, std::int64_t i) {
  return *reinterpret_cast<const lanes<V, W>*>(p + i);
}
template <int W, class V>
__device__ __forceinline__ void store(V* p, std::int64_t i, const lanes<V, W>& x) {
  *reinterpret_cast<lanes<V, W>*>(p + i) = x;
}
/// The lane count of one 16-byte access: 4 floats, 2 doubles.
template <class V>
inline constexpr int vector_lanes = static_cast<int>(16 / sizeof(V));

/// Whether every pointer is a multiple of `bytes` (null pointers, the vectors an op does not use, are).
template <class... P>
bool all_aligned(std::size_t bytes, const P*... p) {
  return ((reinterpret_cast<std::uintptr_t>(p) % bytes == 0) && ...);
}

template <class Op, class = void>
struct is_vectorized : std::false_type {};
template <class Op>
struct is_vectorized<Op, std::void_t<decltype(Op::vectorized)>> : std::bool_constant<Op::vectorized> {};

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

/// Entries i .. i+W-1 of `op`, their terms added to acc (W == 1 for a scalar op).
template <int W, class Op>
__device__ __forceinline__ void accumulate(const Op& op, std::int64_t i, double (&acc)[Op::k]) {
  if constexpr (is_vectorized<Op>::value) {
    op.template accumulate<W>(i, acc);
  } else {
    static_assert(W == 1, "a scalar op runs one entry at a time");
    double t[Op::k];
    op(i, t);
#pragma unroll
    for (int j = 0; j < Op::k; ++j) acc[j] += t[j];
  }
}

/// SpansRanks (an operator over several ranks): the last block writes the K totals to `totals` instead of
/// running finish(); the sum over ranks and finish_sums follow. false: `totals` is unused.
/// W > 1 (a vectorized op whose vectors are all W * sizeof(V) aligned): the grid strides over n / W chunks
/// of W entries, and block 0 takes the last n % W entries one by one.
template <int Block, int W, class Op, bool SpansRanks = false>
__global__ void __launch_bounds__(Block) fused_pass(Op op, std::int64_t n, solver_state* st, sums<Op::k>* partials,
                                                    double* totals = nullptr) {
  constexpr int K = Op::k;
  gpukit::wait_for_prior_grids();  // launched with PDL (solver.cu): nothing is read before the kernel ahead ends
  gpukit::allow_dependent_grids();
  if (Op::gated && st->status != status_running) return;
  op.load(*st);
  sums<K> acc;
#pragma unroll
  for (int j = 0; j < K; ++j) acc.v[j] = 0;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * Block;
  const std::int64_t chunks = n / W;
  for (std::int64_t c = static_cast<std::int64_t>(blockIdx.x) * Block + threadIdx.x; c < chunks; c += stride)
    accumulate<W>(op, c * W, acc.v);
  if (W > 1 && blockIdx.x == 0)
    for (std::int64_t i = chunks * W + threadIdx.x; i < n; i += Block) accumulate<1>(op, i, acc.v);
  using block_sum = reduce::block::block_reduce<Block, sums<K>>;
  __shared__ typename block_sum::storage tmp;
  acc = block_sum::reduce(acc, add_sums{}, tmp);
  if (!reduce::grid::last_block_reduce<Block>(acc, add_sums{}, sums<K>{}, partials, &st->ticket, tmp)) return;
  if (threadIdx.x == 0) {
    if constexpr (SpansRanks) {
#pragma unroll
      for (int j = 0; j < K; ++j) totals[j] = acc.v[j];
    } else {
      op.finish(acc.v, st);
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
  gpukit::wait_for_prior_grids();  // launched with PDL, as fused_pass
  gpukit::allow_dependent_grids();
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
    double t[K] = {};
    accumulate<1>(op, i, t);
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
