// Exact sums as thread, block and grid pieces, for kernels that make their own terms (a solver's update
// fused with its dots, an SpMV epilogue): the sum is accumulated as an integer (every float is an integer
// multiple of the smallest subnormal, reduce/detail/exact_sum.hpp), and integers add associatively, so the
// total, rounded once at the end, has the same bits however the terms were split among threads, blocks,
// launches or GPUs: those of reduce::reproducible_sum of the same terms (whose own 48-register tile kernel
// keeps its shared-atomic block step: see src/cuda/reproducible_sum.cuh). Header-only device code: no
// allocation, no launches; the caller provides the global accumulator.
//
//   thread  exact::thread_sum<T>: a window of the exact sum in registers (reduce/detail/exact_window.hpp);
//           a term outside it (float: 2^20 below or 2^4 above; Wide: 2^40 / 2^24) goes to the block's
//           shared limbs (rare). float terms may go through add_staged instead: a double (float_run)
//           that sums them while that stays exact, the limbs taking what would round; end_block(run, s)
//           merges a block's runs the same way (no windows at all).
//   block   exact::block_sums<T, K, Block> in shared memory; end_block() adds every thread's windows: a
//           shuffle tree per warp, one lane per distinct limb adding into the warp's own row, then one
//           thread per limb adding the rows (shared 64-bit atomics are compare-and-swap loops: all warps
//           adding into the same limbs cost ~12 us per launch of a solver pass on an H200).
//   grid    end_grid(): each block adds its nonzero limbs to the global accumulator with 64-bit integer
//           atomics (order-free); the block that finishes last finds the grid's exact totals in its
//           shared limbs (round() them or take their state()) and leaves the accumulator zeroed again.
//
// Usage (K = 2 sums of floats; the early return, if any, must be taken by whole blocks):
//   __shared__ reduce::exact::block_sums<float, 2, 256> s;
//   reduce::exact::thread_sum<float> t[2];
//   reduce::exact::begin_block<256>(s, t);
//   for (...) { t[0].add(a[i] * b[i]); t[1].add(c[i]); }
//   reduce::exact::end_block<256>(t, s);
//   if (reduce::exact::end_grid<256>(s, limbs, flags, ticket) && threadIdx.x < 2)
//     out[threadIdx.x] = reduce::exact::round(s, threadIdx.x);
// Staged (float): the same with add_staged(run[j], t, s, j) for the adds, begin_block<256>(s) and
// end_block<256>(run, s), float_run run[2] in place of t.
// Limb magnitudes: a digit is < 2^32 (< 2^37 after a warp's sum) and a thread flushes once, so the int64
// limbs hold any n < 2^31 terms per sum even if every term left its window. Runs: a spill (a term, or a
// run's three floats) adds at most 3 digits to a limb, so the limbs hold any data up to 2^29 terms per sum
// in one launch, and larger n unless more than 2^31 / 3 terms leave their runs (0.02-0.04 % do for a
// solver's dots, see add_staged).
#pragma once
#include <cstdint>
#include <type_traits>

#include "reduce/cuda/warp_reduce.cuh"
#include "reduce/detail/exact_window.hpp"
#include "reduce/exact_accumulator.hpp"

namespace reduce::exact {

/// The term a * b of a reproducible dot: the exact product rounded once to T, which is IEEE multiplication
/// in T (for float the 48-bit product is exact in double, so float(double(a) * b) == a * b in float).
/// __fmul_rn / __dmul_rn: never contracted into an FMA; no flush to zero (nvcc's default, -ftz=false).
/// Multiplying in float rather than in double and rounding after spares two 64-bit conversions a term
/// (Hopper runs them at 16 a clock per SM); no change in time was measurable from it alone (H200,
/// reproducible cg 160^3 float: 103.7-103.9 us an iteration against 103.9).
template <class T>
__device__ __forceinline__ T product(T a, T b) {
  static_assert(std::is_same_v<T, float> || std::is_same_v<T, double>, "float or double terms");
  if constexpr (std::is_same_v<T, float>) return __fmul_rn(a, b);
  else return __dmul_rn(a, b);
}

/// Radix-2^32 limbs of one exact sum of T: 12 (float), 68 (double).
template <class T>
inline constexpr int limbs = exact_accumulator<T>::limbs;

/// A block of `Block` threads' K exact sums, in shared memory. `warp_limb` holds each warp's windows, added
/// by one lane at a time without atomics (end_block); `limb` the block's totals, and before end_block the
/// terms that left a thread's window (shared atomics: rare). `digits` is round()'s scratch, one row per sum.
template <class T, int K, int Block>
struct block_sums {
  static_assert(Block % 32 == 0, "whole warps");
  unsigned long long limb[K][limbs<T>];
  unsigned long long warp_limb[Block / 32][K][limbs<T>];
  unsigned flags[K];  // detail::exact_nan / exact_pos_inf / exact_neg_inf seen
  std::uint32_t digits[K][limbs<T>];
  double warp_run[K][Block / 32];  // float runs (add_staged): each warp's, for end_block's last step
  bool last;
};

/// One thread's running exact sum: add() one term, add_tile() N terms at once (branch-free when all lie in
/// the window: float N <= 16, see exact_window::add_tile).
/// Wide (float only; double has one window): a window of 64 exponents instead of 25, for threads that add a
/// few dozen terms spread over many magnitudes (a solver's dots), where the narrow window sends most of them
/// to the shared limbs; the narrow one sums long runs of similar terms faster (tiles of 16 in a double).
template <class T, bool Wide = false>
class thread_sum {
 public:
  /// Sums into `limb` (a block's shared limbs) what leaves the window; begin_block sets it.
  __device__ void attach(unsigned long long* limb) { sink_.limb = limb; }
  __device__ void add(T x) { window_.add(x, sink_); }
  template <int N>
  __device__ void add_tile(const T (&x)[N]) {
    window_.add_tile(x, sink_);
  }
  using window_t = detail::exact_window<
      T, std::conditional_t<Wide && std::is_same_v<T, float>, detail::wide_float_window, detail::window_traits<T>>>;
  /// The window's bits and non-finite flags, for end_block.
  __device__ const window_t& window() const { return window_; }

 private:
  struct shared_sink {
    unsigned long long* limb = nullptr;
    __device__ void operator()(int k, long long d) const { atomicAdd(&limb[k], static_cast<unsigned long long>(d)); }
  };
  window_t window_;
  shared_sink sink_;
};

/// float: a term through a run (detail::float_run: a double holding an exact sum while it can) in front
/// of the block's limbs for sum j: the run's check is inline (about 10 instructions and no branch, 2
/// registers a sum; written with an ordering of the two operands first, selects and a short-circuit
/// branch, it and exact_to_float's bit-by-bit loop together cost reproducible cg about 3 us an
/// iteration: libsolve/README.md);
/// a term that would make it round goes straight to s.limb[j] (shared atomics, two digits a float; rare:
/// 0.02-0.04 % of the terms of cg's q.q on 3D Poisson 160^3, none of p.q and q.r, a host simulation).
/// begin_block(s) before, end_block(run, s) after: no thread_sum at all. No call in the loop on purpose:
/// with a window behind an out-of-line call as the spill target, the stencil SpMV with exact dots took
/// 107-117 us against 74 (H200, 160^3 float: the call fenced the row's loads).
using float_run = detail::float_run;

/// The sink that adds a digit to sum j's limbs of the block (a shared atomic: other threads add too).
template <class T, int K, int Block>
__device__ __forceinline__ auto limb_adder(block_sums<T, K, Block>& s, int j) {
  return [&s, j](int k, long long d) { atomicAdd(&s.limb[j][k], static_cast<unsigned long long>(d)); };
}

template <int K, int Block>
__device__ __forceinline__ void add_staged(float_run& run, float t, block_sums<float, K, Block>& s, int j) {
  if (run.try_add(t)) return;
  unsigned f = 0;
  detail::spill_to_limbs(run, t, limb_adder(s, j), f);
  if (f != 0) atomicOr(&s.flags[j], f);
}

/// Zeroes the block's sums and attaches each thread's t[j] to sum j. Every thread calls it (it ends with a
/// barrier) before any thread_sum adds.
template <int Block, class T, int K>
__device__ void begin_block(block_sums<T, K, Block>& s) {
  for (int i = static_cast<int>(threadIdx.x); i < K * limbs<T>; i += Block) (&s.limb[0][0])[i] = 0;
  for (int i = static_cast<int>(threadIdx.x); i < Block / 32 * K * limbs<T>; i += Block) (&s.warp_limb[0][0][0])[i] = 0;
  if (threadIdx.x < K) s.flags[threadIdx.x] = 0;
  __syncthreads();
}
template <int Block, class T, int K, bool Wide>
__device__ void begin_block(block_sums<T, K, Block>& s, thread_sum<T, Wide> (&t)[K]) {
#pragma unroll
  for (int j = 0; j < K; ++j) t[j].attach(s.limb[j]);
  begin_block<Block>(s);
}

}  // namespace reduce::exact

namespace reduce::detail {
/// One window per lane into `limb`: lanes whose windows start at the same limb add their five digits with a
/// shuffle tree, and one lane per distinct limb offset hands each nonzero sum to add(&limb[k], sum). All 32
/// lanes. end_block passes a plain add into the warp's own row (no atomics: shared 64-bit atomicAdd is a
/// compare-and-swap loop, and with every warp of the block adding into the same limbs the flush of an H200
/// solver pass took ~12 us of its 46); reduce::reproducible_sum's kernel a shared atomic into the block's limbs.
template <class Window, class Add>
__device__ void flush_warp(const Window& w, unsigned long long* limb, Add add) {
  const int base = w.base();
  const bool has = w.total != 0;
  long long d[5] = {0, 0, 0, 0, 0};
  if (has) window_digits(w.total, base, d);
  const int k = has ? base >> 5 : 0;
  const int lane_id = static_cast<int>(threadIdx.x) & (warp::warp_size - 1);
  unsigned pending = __ballot_sync(warp::full_mask, has);
  while (pending) {
    const int leader = __ffs(static_cast<int>(pending)) - 1;
    const int kl = __shfl_sync(warp::full_mask, k, leader);
    const bool mine = has && k == kl;
#pragma unroll
    for (int i = 0; i < 5; ++i) {
      const long long s = warp::sum(mine ? d[i] : 0ll);  // |s| < 32 * 2^32
      if (lane_id == leader && s != 0) add(&limb[kl + i], static_cast<unsigned long long>(s));
    }
    pending &= ~__ballot_sync(warp::full_mask, mine);
    __syncwarp();  // a plain add: the next leader reads what this one wrote
  }
}
}  // namespace reduce::detail

namespace reduce::exact {

/// Adds every thread's K windows to the block's sums: each warp into its row, then one thread per limb
/// adds the rows. Every thread of the block calls it (warp shuffles, barriers): after it, s.limb holds the
/// block's exact totals.
template <int Block, class T, int K, bool Wide>
__device__ void end_block(const thread_sum<T, Wide> (&t)[K], block_sums<T, K, Block>& s) {
  const int warp_id = static_cast<int>(threadIdx.x) / warp::warp_size;
#pragma unroll
  for (int j = 0; j < K; ++j) {
    detail::flush_warp(t[j].window(), s.warp_limb[warp_id][j],
                       [](unsigned long long* p, unsigned long long v) { *p += v; });
    if (t[j].window().flags) atomicOr(&s.flags[j], t[j].window().flags);
  }
  __syncthreads();
  for (int i = static_cast<int>(threadIdx.x); i < K * limbs<T>; i += Block) {
    unsigned long long v = (&s.limb[0][0])[i];
#pragma unroll
    for (int w = 0; w < Block / 32; ++w) v += (&s.warp_limb[w][0][0])[i];
    (&s.limb[0][0])[i] = v;
  }
  __syncthreads();
}

/// add_staged's end: every thread's K runs into the block's limbs. Per warp a shuffle tree merges the
/// runs (detail::merge_runs: their double sum where exact, else the smaller into the limbs), then
/// threads 0..K-1 merge the warps' runs and add the block's to s.limb: about 5 shuffle steps a sum
/// instead of a window's five 64-bit digit sums per distinct window base (end_block above). Every thread
/// of the block calls it (shuffles, barriers); after it s.limb holds the block's exact totals.
template <int Block, int K>
__device__ void end_block(float_run (&run)[K], block_sums<float, K, Block>& s) {
  const int lane = static_cast<int>(threadIdx.x) & (warp::warp_size - 1);
  const int warp_id = static_cast<int>(threadIdx.x) / warp::warp_size;
#pragma unroll
  for (int j = 0; j < K; ++j) {
    float_run r = run[j];
#pragma unroll
    for (int o = warp::warp_size / 2; o > 0; o >>= 1) {
      const float_run other{__shfl_down_sync(warp::full_mask, r.value, o)};
      if (lane < o) r = detail::merge_runs(r, other, limb_adder(s, j));  // lanes >= o hold nothing of use now
    }
    if (lane == 0) s.warp_run[j][warp_id] = r.value;
  }
  __syncthreads();
  if (threadIdx.x < K) {
    const int j = static_cast<int>(threadIdx.x);
    float_run r{s.warp_run[j][0]};
    for (int w = 1; w < Block / 32; ++w) r = detail::merge_runs(r, float_run{s.warp_run[j][w]}, limb_adder(s, j));
    detail::emit_run(r, limb_adder(s, j));
  }
  __syncthreads();
}

/// The grid's step after end_block, in every thread of every block. Global memory: `limb` K * limbs<T>
/// words, `flags` K words, `ticket` one, all zero before the launch (a new buffer: cudaMemset once). Each
/// block adds its nonzero limbs and flags (integer atomics), then takes a ticket; the block taking the last
/// one returns true in all its threads with the grid's totals in s, after zeroing the accumulator for the
/// next launch; the others return false. A one-block grid returns true at once, touching nothing global.
template <int Block, class T, int K>
__device__ bool end_grid(block_sums<T, K, Block>& s, unsigned long long* limb, unsigned* flags, unsigned* ticket) {
  if (gridDim.x == 1) return true;
  constexpr int L = limbs<T>;
  for (int i = static_cast<int>(threadIdx.x); i < K * L; i += Block) {
    const unsigned long long v = (&s.limb[0][0])[i];
    if (v != 0) atomicAdd(&limb[i], v);
  }
  if (threadIdx.x < K && s.flags[threadIdx.x]) atomicOr(&flags[threadIdx.x], s.flags[threadIdx.x]);
  __threadfence();  // this thread's additions are visible before the ticket is taken
  __syncthreads();
  if (threadIdx.x == 0) s.last = atomicAdd(ticket, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!s.last) return false;
  __threadfence();
  for (int i = static_cast<int>(threadIdx.x); i < K * L; i += Block) {
    (&s.limb[0][0])[i] = __ldcg(&limb[i]);
    limb[i] = 0;
  }
  if (threadIdx.x < K) {
    s.flags[threadIdx.x] = __ldcg(&flags[threadIdx.x]);
    flags[threadIdx.x] = 0;
  }
  if (threadIdx.x == 0) *ticket = 0;
  __syncthreads();
  return true;
}

/// Sum j rounded once to nearest even (IEEE's rules for the non-finite terms: NaN if a NaN or both
/// infinities were seen, else the infinity seen). One thread per j (each uses its own digit row).
template <class T, int K, int Block>
__device__ T round(block_sums<T, K, Block>& s, int j) {
  return detail::exact_to_float<T>(reinterpret_cast<const std::int64_t*>(s.limb[j]), s.flags[j], s.digits[j]);
}

/// Sum j as a normalized exact state (reduce/exact_accumulator.hpp), to be merged with others (an
/// all-reduce over ranks) and rounded once after.
template <class T, int K, int Block>
__device__ void state(const block_sums<T, K, Block>& s, int j, exact_accumulator<T>* out) {
  for (int i = 0; i < limbs<T>; ++i) out->limb[i] = static_cast<std::int64_t>(s.limb[j][i]);
  detail::normalize_limbs(out->limb, limbs<T>);
  out->nan = (s.flags[j] & detail::exact_nan) ? 1 : 0;
  out->pos_inf = (s.flags[j] & detail::exact_pos_inf) ? 1 : 0;
  out->neg_inf = (s.flags[j] & detail::exact_neg_inf) ? 1 : 0;
}

}  // namespace reduce::exact
