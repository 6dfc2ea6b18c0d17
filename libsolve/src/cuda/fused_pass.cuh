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
//   template <int W, class Acc> __device__ void accumulate(i, Acc& acc) const;
//        update entries i .. i+W-1, reading and writing each vector with one W-wide access (lanes below),
//        and give the term j of entry i + l, in entry order, as acc.add_product(j, l, a, b) (the term a b)
//        or acc.add(j, l, t); each (j, l) takes one term (sums ignore l and add them up in double;
//        lane_terms keep each one rounded to Value, for the reproducible mode);
//   bool aligned(std::size_t bytes) const;     (host) whether every vector it touches is that aligned.
// Why: a scalar op stores to r[i] before the next entry's loads, and the compiler cannot move those loads
// above stores that may alias, so each thread has one entry's loads in flight. 16-byte accesses carry 4
// floats per load. H200, 3D Poisson 160^3 float (solve bench, per iteration): pcg 129.6 -> 111.3 us,
// pipecg 138.9 -> 128.4, cg 107.3 -> 104.1; cg's step pass alone 40.9 -> 33.0 us (2.8 -> 3.5 TB/s).
// The reproducible mode runs the same op through fused_exact_pass: each term rounded to Value and summed
// EXACTLY (reduce/cuda/exact_reduce.cuh), so the sums are reduce::reproducible_sum of the rounded terms,
// the same bits on any grid, block size or GPU, in the same single pass over memory.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "gpukit/grid_dependency.cuh"
#include "reduce/cuda/block_reduce.cuh"
#include "reduce/cuda/exact_reduce.cuh"
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

/// K running sums: the default mode's accumulator (every lane's term j added to v[j]; a product formed in
/// double, exact for float factors).
template <int K>
struct sums {
  double v[K];
  __device__ void add(int j, int, double t) { v[j] += t; }
  template <class V>
  __device__ void add_product(int j, int, V a, V b) {
    v[j] += static_cast<double>(a) * b;
  }
};

/// The K terms of each of W entries, kept apart and rounded to Value (zero where none came): the
/// reproducible mode sums them exactly. A product is rounded once, multiplied in Value
/// (reduce::exact::product: the bits of the double product rounded, without the two 64-bit conversions a
/// term). Indexed by constants once accumulate is unrolled: registers.
template <int K, int W, class Value>
struct lane_terms {
  Value t[K][W] = {};
  __device__ void add(int j, int l, double term) { t[j][l] = static_cast<Value>(term); }
  __device__ void add_product(int j, int l, Value a, Value b) { t[j][l] = reduce::exact::product(a, b); }
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
template <int W, class Op, class Acc>
__device__ __forceinline__ void accumulate(const Op& op, std::int64_t i, Acc& acc) {
  if constexpr (is_vectorized<Op>::value) {
    op.template accumulate<W>(i, acc);
  } else {
    static_assert(W == 1, "a scalar op runs one entry at a time");
    double t[Op::k];
    op(i, t);
#pragma unroll
    for (int j = 0; j < Op::k; ++j) acc.add(j, 0, t[j]);
  }
}

/// f(c) for this thread's chunks c < chunks of a grid-stride loop: thread t of the grid takes t, t + stride,
/// ... (Down false) or chunks - 1 - t, chunks - 1 - t - stride, ... (Down: the same chunks mirrored, each
/// thread's in the reverse order). The downward loop counts down itself: an upward counter mapped by
/// chunks - 1 - c kept cg's float update at 44 registers (5 blocks per SM), this loop at 36 (ptxas, sm_90;
/// the same entries in the same order, so the default mode's sums keep their bits).
template <int Block, bool Down, class F>
__device__ __forceinline__ void for_each_chunk(std::int64_t chunks, F&& f) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * Block;
  const std::int64_t first = static_cast<std::int64_t>(blockIdx.x) * Block + threadIdx.x;
  if constexpr (Down) {
    for (std::int64_t c = chunks - 1 - first; c >= 0; c -= stride) f(c);
  } else {
    for (std::int64_t c = first; c < chunks; c += stride) f(c);
  }
}

/// SpansRanks (an operator over several ranks): the last block writes the K totals to `totals` instead of
/// running finish(); the sum over ranks and finish_sums follow. false: `totals` is unused.
/// W > 1 (a vectorized op whose vectors are all W * sizeof(V) aligned): the grid strides over n / W chunks
/// of W entries, and block 0 takes the last n % W entries one by one.
/// Down: the entries are taken from the last one down (solver.cu, walks_down). A template parameter, not a
/// runtime flag: a flag, as a select or as two loops, took cg's float pass from 32 to 38-40 registers, 6
/// blocks per SM instead of the 8 the grid is sized for (64^3 cg 17.0 us an iteration against 16.3, H100);
/// the upward kernels keep their registers (32 for cg's float pass). The downward one counts down in its
/// own loop (for_each_chunk: 36 registers, 6 blocks per SM; solver.cu launches one wave of it).
template <int Block, int W, class Op, bool SpansRanks = false, bool Down = false>
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
  const std::int64_t chunks = n / W;
  for_each_chunk<Block, Down>(chunks, [&](std::int64_t c) { accumulate<W>(op, c * W, acc); });
  if (W > 1 && blockIdx.x == 0)
    for (std::int64_t i = chunks * W + threadIdx.x; i < n; i += Block) accumulate<1>(op, i, acc);
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
template <int Block, class Op, bool Down = false>
__global__ void __launch_bounds__(Block) map_pass(Op op, std::int64_t n, const solver_state* st) {
  gpukit::wait_for_prior_grids();  // launched with PDL, as fused_pass
  gpukit::allow_dependent_grids();
  if (Op::gated && st->status != status_running) return;
  op.load(*st);
  for_each_chunk<Block, Down>(n, [&](std::int64_t i) { op(i); });
}

/// The reproducible mode's fused_pass: the same updates, with the K terms of each entry rounded to Value
/// and summed exactly (thread windows, block limbs, grid atomics: reduce/cuda/exact_reduce.cuh). The last
/// block rounds each sum once and runs finish(), or with SpansRanks writes the K exact states to `states`
/// for the sum over ranks (then reduce::round_exact and finish_terms). `limb` (K * exact::limbs<Value>
/// words), `flags` (K) and `ticket` are reduce::exact::end_grid's global accumulator: zero before the first
/// launch, and every launch leaves them zero.
template <int Block, int W, class Op, class Value, bool SpansRanks, bool Down = false>
__global__ void __launch_bounds__(Block)
    fused_exact_pass(Op op, std::int64_t n, solver_state* st, unsigned long long* limb, unsigned* flags,
                     unsigned* ticket, reduce::exact_accumulator<Value>* states) {
  constexpr int K = Op::k;
  gpukit::wait_for_prior_grids();  // launched with PDL, as fused_pass
  gpukit::allow_dependent_grids();
  // Taken by whole blocks, as end_block and end_grid need: the status changes only in a finish, after every
  // block of this pass has read it.
  if (Op::gated && st->status != status_running) return;
  op.load(*st);
  __shared__ reduce::exact::block_sums<Value, K, Block> s;
  reduce::exact::thread_sum<Value, true> sum[K];  // wide: a thread's few dozen terms span many magnitudes
  reduce::exact::begin_block<Block>(s, sum);
  const auto add = [&](auto& terms) {
#pragma unroll
    for (int j = 0; j < K; ++j) sum[j].add_tile(terms.t[j]);
  };
  const std::int64_t chunks = n / W;
  for_each_chunk<Block, Down>(chunks, [&](std::int64_t c) {
    lane_terms<K, W, Value> terms;
    accumulate<W>(op, c * W, terms);  // exact sums: the same bits either way
    add(terms);
  });
  if (W > 1 && blockIdx.x == 0)
    for (std::int64_t i = chunks * W + threadIdx.x; i < n; i += Block) {
      lane_terms<K, 1, Value> terms;
      accumulate<1>(op, i, terms);
      add(terms);
    }
  reduce::exact::end_block<Block>(sum, s);
  if (!reduce::exact::end_grid<Block>(s, limb, flags, ticket)) return;
  if constexpr (SpansRanks) {
    if (threadIdx.x < K) reduce::exact::state(s, static_cast<int>(threadIdx.x), states + threadIdx.x);
  } else {
    __shared__ double rounded[K];
    if (threadIdx.x < K) rounded[threadIdx.x] = static_cast<double>(reduce::exact::round(s, static_cast<int>(threadIdx.x)));
    __syncthreads();
    if (threadIdx.x == 0) op.finish(rounded, st);
  }
}

/// Reproducible mode over several ranks, after the sum of the exact states and reduce::round_exact: the op's finish.
template <class Op, class Value>
__global__ void finish_terms(Op op, solver_state* st, const Value* term_sums) {
  if (Op::gated && st->status != status_running) return;
  double s[Op::k];
#pragma unroll
  for (int j = 0; j < Op::k; ++j) s[j] = static_cast<double>(term_sums[j]);
  op.finish(s, st);
}

}  // namespace solve::detail
