// The row-parallel SpMV kernels: scalar (a thread per row), shared_cached (the seed's csrmul_shared),
// warp_per_row, vector (Width lanes per row) and block_per_row. Device code only; dispatch in spmv.cu.
// Every kernel sums row i in a fixed order (its entries in column-storage order per thread or lane, then
// libreduce's fixed warp/block tree), so results are run-to-run deterministic.
//
// Loads: values and col_idx are plain loads by default (L1-cached: scalar's 32 rows per warp re-read the
// same lines on every step); x is gathered through the read-only path (__ldg). Measured on the H200
// (2026-11-21): evict-first loads (ld.global.cs) of values/col_idx made scalar 23-38 % slower on the
// Laplacians and adaptive's stream tiles 1.7x slower, but made vector 7 % faster on random2, whose 32 MB
// x competes with the streamed entries for the 50 MB L2 (161 vs 173 us), and 2-3 % on random1000; so
// the vector kernel streams only when x is large (spmv_plan: x > 16 MiB). Reading entries once
// (entry_load::once: no L1 allocation, L2 evict-first) pays only where every tile reads its entries
// fully coalesced: adaptive (powerlaw 3.5 % faster); vector W=4 touches each entry sector twice and
// became 12 % slower (bench/experiments/README.md, section 3). Lanes that own
// several entries of a row can read them as aligned 4-entry chunks (one 16-byte load for float/int32,
// two for double/int64), the unaligned head and tail one entry per lane.
#pragma once
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "gpukit/grid_dependency.cuh"
#include "reduce/cuda/block_reduce.cuh"
#include "reduce/cuda/warp_reduce.cuh"
#include "reduce/operators.hpp"
#include "sparse/csr_view.hpp"
#include "spmv_dots.cuh"
#include "spmv_split_rows.hpp"
#include "spmv_stencil_plan.hpp"

namespace sparse::detail {

/// y_i = alpha * s + beta * y_i; beta == 0 never reads y (the caller's y may be NaN poison). The fused
/// multiply-add is written out: left to contraction, the compiler fused alpha * s in some kernels and
/// beta * y_i in others, and kernels that promise scalar's bits (stencil, windowed) differed from it.
/// Returns the value stored (spmv_dots's epilogue takes its terms from it without reading y back).
template <class Value>
__device__ __forceinline__ Value store_row(Value* __restrict__ y, std::int64_t row, Value s, Value alpha, Value beta) {
  const Value v = beta == Value(0) ? alpha * s : fma(alpha, s, beta * y[row]);
  y[row] = v;
  return v;
}

/// A row split over several blocks (merge, adaptive): writes this block's part `s` of split row `k` to
/// its slot; the block that writes the row's last part
/// (the arrival counter reaches its chunk count) adds all parts in slot order and stores the row, then
/// resets the counter for the next call. Called by one thread. The fences order the partial's store
/// before the count, and the count before the reads of the other blocks' partials (through L2: __ldcg).
template <class Value>
__device__ __forceinline__ void finish_split(std::int64_t k, std::int64_t slot, Value s, const spmv_split_row* rows,
                                             int* arrivals, Value* partials, Value alpha, Value beta, Value* y) {
  partials[slot] = s;
  __threadfence();
  const spmv_split_row r = rows[k];
  if (atomicAdd(arrivals + k, 1) + 1 != r.chunks) return;
  __threadfence();
  Value total = Value(0);
  for (std::int64_t c = 0; c < r.chunks; ++c) total += __ldcg(partials + r.first_slot + c);
  store_row(y, r.row, total, alpha, beta);
  arrivals[k] = 0;
}

/// Four consecutive entries from a 16-byte-aligned address (p = base + 4k).
template <class T>
struct quad {
  T v[4];
};
template <class T>
__device__ __forceinline__ quad<T> load4(const T* p) {
  quad<T> q;
  if constexpr (std::is_same_v<T, float>) {
    const float4 f = *reinterpret_cast<const float4*>(p);
    q.v[0] = f.x, q.v[1] = f.y, q.v[2] = f.z, q.v[3] = f.w;
  } else if constexpr (std::is_same_v<T, std::int32_t>) {
    const int4 f = *reinterpret_cast<const int4*>(p);
    q.v[0] = f.x, q.v[1] = f.y, q.v[2] = f.z, q.v[3] = f.w;
  } else if constexpr (std::is_same_v<T, double>) {
    const double2 f = reinterpret_cast<const double2*>(p)[0], g = reinterpret_cast<const double2*>(p)[1];
    q.v[0] = f.x, q.v[1] = f.y, q.v[2] = g.x, q.v[3] = g.y;
  } else {
    static_assert(std::is_same_v<T, std::int64_t>, "value float/double, index int32/int64");
    const longlong2 f = reinterpret_cast<const longlong2*>(p)[0], g = reinterpret_cast<const longlong2*>(p)[1];
    q.v[0] = f.x, q.v[1] = f.y, q.v[2] = g.x, q.v[3] = g.y;
  }
  return q;
}

/// How x is gathered: through the read-only path (ld.global.nc, L1-cached); L2 only (ld.global.cg),
/// which spares L1 the allocation of lines that random gathers almost never hit again; or read-only
/// with an L2 evict_last policy (createpolicy, sm_80+), so the streamed matrix entries cannot push x out
/// of L2 (with L1::no_allocate in `l2_keep_noalloc`).
enum class gather { ldg, l2_only, l2_keep, l2_keep_noalloc };
/// How the matrix entries (values, col_idx) are loaded: plain (L1-cached), ld.global.cs (evict-first in
/// L1 and L2), or read-only, not allocated in L1, with an L2 evict_first policy (`once`).
enum class entry_load { cached, streaming, once };

/// L2 eviction policies for ld's .L2::cache_hint operand (sm_80+). Not volatile: the compiler may hoist
/// and share them.
__device__ __forceinline__ std::uint64_t l2_evict_last_policy() {
  std::uint64_t p;
  asm("createpolicy.fractional.L2::evict_last.b64 %0, 1.0;" : "=l"(p));
  return p;
}
__device__ __forceinline__ std::uint64_t l2_evict_first_policy() {
  std::uint64_t p;
  asm("createpolicy.fractional.L2::evict_first.b64 %0, 1.0;" : "=l"(p));
  return p;
}

/// Read-only load of a 4- or 8-byte value with an L2 policy; NoL1: .L1::no_allocate.
template <bool NoL1, class T>
__device__ __forceinline__ T load_with_policy(const T* p, std::uint64_t policy) {
  static_assert(sizeof(T) == 4 || sizeof(T) == 8, "4- or 8-byte values");
  if constexpr (sizeof(T) == 4) {
    std::uint32_t r;
    if constexpr (NoL1)
      asm("ld.global.nc.L1::no_allocate.L2::cache_hint.b32 %0, [%1], %2;" : "=r"(r) : "l"(p), "l"(policy));
    else
      asm("ld.global.nc.L2::cache_hint.b32 %0, [%1], %2;" : "=r"(r) : "l"(p), "l"(policy));
    T out;
    std::memcpy(&out, &r, 4);
    return out;
  } else {
    std::uint64_t r;
    if constexpr (NoL1)
      asm("ld.global.nc.L1::no_allocate.L2::cache_hint.b64 %0, [%1], %2;" : "=l"(r) : "l"(p), "l"(policy));
    else
      asm("ld.global.nc.L2::cache_hint.b64 %0, [%1], %2;" : "=l"(r) : "l"(p), "l"(policy));
    T out;
    std::memcpy(&out, &r, 8);
    return out;
  }
}

template <gather G, class Value>
__device__ __forceinline__ Value load_x(const Value* __restrict__ x, std::int64_t j) {
  if constexpr (G == gather::ldg) return __ldg(x + j);
  else if constexpr (G == gather::l2_only) return __ldcg(x + j);
  else return load_with_policy<G == gather::l2_keep_noalloc>(x + j, l2_evict_last_policy());
}

/// One matrix entry (see entry_load).
template <entry_load E, class T>
__device__ __forceinline__ T load_entry(const T* p) {
  if constexpr (E == entry_load::cached) return *p;
  else if constexpr (E == entry_load::once) return load_with_policy<true>(p, l2_evict_first_policy());
  else if constexpr (std::is_same_v<T, std::int64_t>) return static_cast<T>(__ldcs(reinterpret_cast<const long long*>(p)));
  else return __ldcs(p);
}

/// a_p * x[col_p].
template <class Value, class Index, gather G = gather::ldg, entry_load E = entry_load::cached>
__device__ __forceinline__ Value product(const csr_view<Value, Index>& a, const Value* __restrict__ x, std::int64_t p) {
  return load_entry<E>(a.values + p) * load_x<G>(x, load_entry<E>(a.col_idx + p));
}

/// Sequential dot product of entries [begin, end) with x: one thread, column-storage order.
template <class Value, class Index>
__device__ __forceinline__ Value row_dot(const csr_view<Value, Index>& a, const Value* __restrict__ x,
                                         std::int64_t begin, std::int64_t end) {
  Value s = Value(0);
  for (std::int64_t p = begin; p < end; ++p) s += product(a, x, p);
  return s;
}

/// Strided partial dot product: entries begin + lane, begin + lane + stride, ... (lane's share of a row).
/// Unrolled by 4 so each thread has four independent (col -> x) load chains in flight.
template <entry_load E = entry_load::cached, gather G = gather::ldg, class Value, class Index>
__device__ __forceinline__ Value strided_dot(const csr_view<Value, Index>& a, const Value* __restrict__ x,
                                             std::int64_t begin, std::int64_t end, int lane, int stride) {
  Value s = Value(0);
#pragma unroll 4
  for (std::int64_t p = begin + lane; p < end; p += stride) s += product<Value, Index, G, E>(a, x, p);
  return s;
}

/// Chunked partial dot product of [begin, end) for `lanes` lanes: the unaligned head (< 4 entries) one
/// entry per lane, then aligned 4-entry chunks (16-byte loads: four independent gathers per load) strided
/// over the lanes, then the tail (< 4 entries) one per lane. Each lane's order is fixed by the structure.
template <gather G = gather::ldg, class Value, class Index>
__device__ __forceinline__ Value chunked_dot(const csr_view<Value, Index>& a, const Value* __restrict__ x,
                                             std::int64_t begin, std::int64_t end, int lane, int lanes) {
  const std::int64_t body = (begin + 3) & ~std::int64_t{3};
  const std::int64_t ab = body < end ? body : end;                       // aligned body start
  const std::int64_t ae = (end & ~std::int64_t{3}) > ab ? (end & ~std::int64_t{3}) : ab;  // aligned body end
  Value s = Value(0);
  for (std::int64_t p = begin + lane; p < ab; p += lanes) s += product<Value, Index, G>(a, x, p);
#pragma unroll 2
  for (std::int64_t c = ab + 4 * static_cast<std::int64_t>(lane); c < ae; c += 4 * static_cast<std::int64_t>(lanes)) {
    const quad<Value> v = load4(a.values + c);
    const quad<Index> j = load4(a.col_idx + c);
    const Value x0 = load_x<G>(x, j.v[0]), x1 = load_x<G>(x, j.v[1]), x2 = load_x<G>(x, j.v[2]), x3 = load_x<G>(x, j.v[3]);
    s += v.v[0] * x0;
    s += v.v[1] * x1;
    s += v.v[2] * x2;
    s += v.v[3] * x3;
  }
  for (std::int64_t p = ae + lane; p < end; p += lanes) s += product<Value, Index, G>(a, x, p);
  return s;
}

/// scalar: one thread per row (the seed's csrmul_kernel), grid-stride over rows.
template <class Value, class Index>
__global__ void __launch_bounds__(256)
spmv_scalar_kernel(csr_view<Value, Index> a, Value alpha, const Value* __restrict__ x, Value beta, Value* __restrict__ y) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; row < a.rows; row += stride)
    store_row(y, row, row_dot(a, x, a.row_ptr[row], a.row_ptr[row + 1]), alpha, beta);
}

/// stencil: scalar's thread per row, with the row's columns taken from its pattern (row + offsets)
/// instead of col_idx (spmv_stencil_plan.hpp). The pattern table (`table`, stencil_table::words, at most
/// stencil_table_words) is copied to shared memory once per block; a warp's rows mostly share a pattern,
/// so its offset reads are broadcasts. Unroll = 8 (the plan's choice when every row has at most 8
/// entries): the first 8 loads of a row are issued at once, clamped to its last entry (in bounds), their
/// uses guarded, and a longer row's rest follows in a loop; its rows' starts are packed
/// (stencil_row_starts: 2 bytes a row for the pattern byte and row_ptr's 5). Unroll = 0: a plain loop
/// over row_ptr's entries. Either way the products are added in storage order with the same fused
/// multiply-adds as row_dot: the sums are bitwise scalar's. Measured on an H200
/// (bench/experiments/spmv_variants.cu): laplace3d 47.4-47.6 us unrolled against 49.0-49.1 as a loop
/// (laplace2d 43.1 against 42.2); reading row_ptr once per warp plus a warp scan of the pattern lengths
/// saves 4 bytes a row but was 3-6 % slower (the scan lengthens each row's dependency chain); packed
/// starts save 3 with no scan: laplace3d 47.1-48.0 us against 48.5-48.6 read from row_ptr, laplace2d the
/// same (43.5-43.8 against 43.5-43.6; H200, 2026-12-03).

/// One row of the stencil kernel: entries begin.. of the values times x[row + offsets[k]], k < len, in
/// storage order (Unroll: see below). `meanwhile()` runs once, after the row's loads are issued and before
/// their first use (Unroll 0: first): work that needs none of them hides behind their latency.
template <int Unroll, class Value, class Index, class Meanwhile>
__device__ __forceinline__ Value stencil_row_dot(const csr_view<Value, Index>& a, const Value* __restrict__ x,
                                                 std::int64_t row, std::int64_t begin, const std::int32_t* offsets,
                                                 int len, Meanwhile&& meanwhile) {
  Value s = Value(0);
  if constexpr (Unroll == 0) {
    meanwhile();
    for (int k = 0; k < len; ++k) s += a.values[begin + k] * __ldg(x + (row + offsets[k]));
  } else if (len > 0) {
    Value v[Unroll], xv[Unroll];
#pragma unroll
    for (int k = 0; k < Unroll; ++k) {
      const int kk = k < len ? k : len - 1;
      v[k] = a.values[begin + kk];
      xv[k] = __ldg(x + (row + offsets[kk]));
    }
    meanwhile();
#pragma unroll
    for (int k = 0; k < Unroll; ++k)
      if (k < len) s += v[k] * xv[k];
    for (int k = Unroll; k < len; ++k) s += a.values[begin + k] * __ldg(x + (row + offsets[k]));  // rows > Unroll
  } else {
    meanwhile();
  }
  return s;
}

template <int Unroll, class Value, class Index>
__device__ __forceinline__ Value stencil_row_dot(const csr_view<Value, Index>& a, const Value* __restrict__ x,
                                                 std::int64_t row, std::int64_t begin, const std::int32_t* offsets,
                                                 int len) {
  return stencil_row_dot<Unroll>(a, x, row, begin, offsets, len, [] {});
}

/// Where the stencil kernel finds a row's pattern and first entry: the unrolled form's packed starts
/// (stencil_row_starts: 2 bytes a row and a base per 32 rows) or the loop form's pattern byte and row_ptr.
/// Plan data, read-only for the kernel's life: loaded through the read-only path (__ldg).
struct stencil_rows {
  const std::uint8_t* pattern_of_row;  ///< the loop form's
  const std::uint16_t* packed_row;     ///< the unrolled form's, with group_start
  const std::int64_t* group_start;
};

/// Row `row`'s pattern id and first entry; row0 = its warp's first row (a multiple of stencil_row_group),
/// so the group's base is one broadcast load per warp. A row past the matrix (not live) reads none of its
/// own.
template <bool Packed, class Value, class Index>
__device__ __forceinline__ void stencil_row_start(const stencil_rows& rows, const csr_view<Value, Index>& a,
                                                  std::int64_t row0, std::int64_t row, bool live, int& pattern,
                                                  std::int64_t& begin) {
  if constexpr (Packed) {
    const unsigned w = live ? __ldg(rows.packed_row + row) : 0u;
    pattern = static_cast<int>(w & 0xffu);
    const std::int64_t group_first = __ldg(rows.group_start + static_cast<std::uint64_t>(row0) / stencil_row_group);
    begin = group_first + static_cast<std::int64_t>(w >> 8);
  } else {
    pattern = live ? __ldg(rows.pattern_of_row + row) : 0;
    begin = live ? static_cast<std::int64_t>(a.row_ptr[row]) : 0;
  }
}

/// Copies the stencil table (stencil_table::words words: begin[patterns + 1], then every pattern's
/// offsets) into the block's `shared` array of stencil_table_words; returns where the offsets start there.
/// Every thread of the block must call it (it ends with a barrier).
__device__ __forceinline__ const std::int32_t* stage_stencil_table(std::int32_t* shared,
                                                                   const std::int32_t* __restrict__ table,
                                                                   int patterns, int words) {
  for (int i = threadIdx.x; i < words; i += blockDim.x) shared[i] = table[i];
  __syncthreads();
  return shared + patterns + 1;
}

/// Dots (spmv_dots, called with alpha 1 and beta 0): each thread also adds its live rows' terms x_i y_i,
/// y_i w_i, y_i y_i (spmv_dots.cuh) from the value it stored, and after the row loop every thread of
/// the block joins finish_dots (the loop is uniform per warp and holds no barrier, so all 256 arrive).
/// One launch instead of the SpMV and a second pass over x, y and w (12 bytes a float row): here y is
/// not read back, and x[row] is an address the row's own diagonal gather loads (an L1 hit). x[row] and
/// w[row] are loaded with the row's first loads, before its gathers: loaded in the epilogue, after the
/// row's dot, their latency came on top of the gathers' (H100, 160^3 float: 72 us against 60 us for the
/// plain stencil SpMV, 16.4 MB more read). Dots == exact: each term rounded to Value and summed exactly
/// (spmv_dots.cuh), for libsolve's reproducible mode. float: each thread's terms go into three double
/// runs (reduce::exact::add_staged) right after the row's store, as the fast sums do: 40 registers, 6
/// blocks per SM, like the fast kernel (H200, 160^3 float: 66.9-68.7 us, reproducible cg 107.3 us per
/// iteration against 72.5-73.3 us and 118.3-118.6 with the wide windows below, same run). double: the
/// terms go into wide windows (~100 integer instructions a row), so a row's terms wait in registers and
/// are added while the next row's loads are in flight (added at once they stalled the loads: H100, float
/// before the runs, 176.2 against 151.4 us per iteration).
template <int Unroll, dots_kind Dots, class Value, class Index>
__global__ void __launch_bounds__(stencil_block_threads)
spmv_stencil_kernel(csr_view<Value, Index> a, stencil_rows rows, const std::int32_t* __restrict__ table, int patterns,
                    int words, Value alpha, const Value* __restrict__ x, Value beta, Value* __restrict__ y,
                    dots_args<Value> dots) {
  static_assert(Unroll == 0 || Unroll == stencil_unrolled_row, "a plain loop, or 8 loads in flight");
  static_assert(stencil_block_threads % stencil_row_group == 0, "a warp's rows are one packed-start group");
  constexpr bool packed = Unroll != 0;  // rows of <= 8 entries always pack their starts (spmv_stencil_plan.hpp)
  __shared__ std::int32_t s_table[stencil_table_words];
  [[maybe_unused]] dots_acc<Dots, Value> acc;
  // double's exact terms wait for the next row's loads; float's runs add at once (see above).
  constexpr bool deferred = Dots == dots_kind::exact && !std::is_same_v<Value, float>;
  [[maybe_unused]] rounded_terms<Value> pending{};  // deferred: the previous row's terms
  const std::int32_t* off = stage_stencil_table(s_table, table, patterns, words);  // plan data: before the wait
  if constexpr (Dots != dots_kind::none) start_dots<stencil_block_threads, Value>(acc);
  gpukit::wait_for_prior_grids();  // launched with PDL (spmv.cu): x, y and w only after the kernel ahead ends
  gpukit::allow_dependent_grids();
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + (threadIdx.x & ~31u); row0 < a.rows;
       row0 += stride) {  // a warp's 32 consecutive rows
    const std::int64_t row = row0 + lane;
    const bool live = row < a.rows;
    [[maybe_unused]] Value xi = Value(0), wi = Value(0);
    if constexpr (Dots != dots_kind::none) {
      if (live) {
        xi = __ldg(x + row);
        wi = __ldg(dots.w + row);
      }
    }
    int p;
    std::int64_t begin;
    stencil_row_start<packed>(rows, a, row0, row, live, p, begin);
    const int first = s_table[p];
    const int len = live ? s_table[p + 1] - first : 0;
    const Value s = stencil_row_dot<Unroll>(a, x, row, begin, off + first, len, [&] {
      if constexpr (deferred) add_rounded(acc, pending);
    });
    if constexpr (deferred) pending = rounded_terms<Value>{};
    if (live) {
      const Value yi = store_row(y, row, s, alpha, beta);
      if constexpr (deferred) pending = round_terms(xi, yi, wi);
      else if constexpr (Dots != dots_kind::none) add_terms(acc, xi, yi, wi);
    }
  }
  if constexpr (deferred) add_rounded(acc, pending);
  if constexpr (Dots != dots_kind::none) finish_dots<stencil_block_threads>(acc, dots);
}

/// shared_cached: the seed's csrmul_shared. A block owns rows [begin, begin + BlockThreads) and caches
/// x[begin .. begin + BlockThreads) (clipped to cols, so rectangular matrices work) in shared memory;
/// columns outside that window are read from global memory.
template <int BlockThreads, class Value, class Index>
__global__ void __launch_bounds__(BlockThreads)
spmv_shared_cached_kernel(csr_view<Value, Index> a, Value alpha, const Value* __restrict__ x, Value beta,
                          Value* __restrict__ y) {
  __shared__ Value cache[BlockThreads];
  for (std::int64_t begin = static_cast<std::int64_t>(blockIdx.x) * BlockThreads; begin < a.rows;
       begin += static_cast<std::int64_t>(gridDim.x) * BlockThreads) {  // uniform per block: barriers are safe
    const std::int64_t window_end = begin + BlockThreads < a.cols ? begin + BlockThreads : a.cols;
    const std::int64_t row = begin + threadIdx.x;
    if (begin + threadIdx.x < window_end) cache[threadIdx.x] = x[begin + threadIdx.x];
    __syncthreads();
    if (row < a.rows) {
      Value s = Value(0);
      for (std::int64_t p = a.row_ptr[row]; p < a.row_ptr[row + 1]; ++p) {
        const std::int64_t j = a.col_idx[p];
        const Value xj = (j >= begin && j < window_end) ? cache[j - begin] : __ldg(x + j);
        s += a.values[p] * xj;
      }
      store_row(y, row, s, alpha, beta);
    }
    __syncthreads();  // the cache is overwritten by the next window
  }
}

/// warp_per_row: one warp per row, lanes take 4-entry chunks of the row (chunked_dot), reduce::warp::reduce_to_first finishes it.
/// The loop bound is uniform per warp, so all 32 lanes reach the shuffle together.
template <class Value, class Index>
__global__ void __launch_bounds__(256)
spmv_warp_per_row_kernel(csr_view<Value, Index> a, Value alpha, const Value* __restrict__ x, Value beta,
                         Value* __restrict__ y) {
  constexpr int ws = reduce::warp::warp_size;
  const int lane = static_cast<int>(threadIdx.x) % ws;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / ws);
  for (std::int64_t row = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / ws; row < a.rows;
       row += warps) {
    Value s = chunked_dot(a, x, a.row_ptr[row], a.row_ptr[row + 1], lane, ws);
    s = reduce::warp::reduce_to_first(s, reduce::plus{});
    if (lane == 0) store_row(y, row, s, alpha, beta);
  }
}

/// vector: Width lanes per row (Width in 2..32), reduce::warp::all_reduce<Width> finishes each row.
/// Chunked: lanes read aligned 4-entry chunks (chunked_dot; rows of >= 8 Width entries), otherwise one
/// entry per lane per step (strided_dot), entries loaded as E says, x gathered as G says.
/// The loop runs over warp-sized groups of rows so every lane of the warp joins every shuffle; lanes of a
/// row past the end contribute a 0 they never store.
template <int Width, bool Chunked, entry_load E, gather G = gather::ldg, class Value, class Index>
__global__ void __launch_bounds__(256)
spmv_vector_kernel(csr_view<Value, Index> a, Value alpha, const Value* __restrict__ x, Value beta, Value* __restrict__ y) {
  constexpr int ws = reduce::warp::warp_size;
  constexpr int rows_per_warp = ws / Width;
  const int lane = static_cast<int>(threadIdx.x) % Width;
  const int group = (static_cast<int>(threadIdx.x) % ws) / Width;
  const std::int64_t warp = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / ws;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / ws);
  for (std::int64_t base = warp * rows_per_warp; base < a.rows; base += warps * rows_per_warp) {
    const std::int64_t row = base + group;
    Value s = Value(0);
    if (row < a.rows) {
      if constexpr (Chunked) s = chunked_dot<G>(a, x, a.row_ptr[row], a.row_ptr[row + 1], lane, Width);
      else s = strided_dot<E, G>(a, x, a.row_ptr[row], a.row_ptr[row + 1], lane, Width);
    }
    s = reduce::warp::all_reduce<Width>(s, reduce::plus{});
    if (row < a.rows && lane == 0) store_row(y, row, s, alpha, beta);
  }
}

/// warp_stream: CSR-stream per warp. A warp owns 32 consecutive rows; their entries (one contiguous
/// stretch, at most WarpEntries) are multiplied with x using fully coalesced loads (each load instruction
/// reads 128 consecutive bytes; several per lane in flight) and staged in shared memory, then each lane
/// sums its own row from there in storage order: the same order, hence the same bits, as scalar, without
/// scalar's 32 scattered row streams per warp. A warp whose rows hold more entries than fit falls back to
/// scalar's loop for those rows (uniform per warp). No block barrier: only __syncwarp.
template <int WarpEntries, class Value, class Index>
__global__ void __launch_bounds__(256)
spmv_warp_stream_kernel(csr_view<Value, Index> a, Value alpha, const Value* __restrict__ x, Value beta,
                        Value* __restrict__ y) {
  constexpr int ws = reduce::warp::warp_size;
  __shared__ Value staged[256 / ws][WarpEntries];
  const int lane = static_cast<int>(threadIdx.x) % ws, w = static_cast<int>(threadIdx.x) / ws;
  Value* buf = staged[w];
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / ws);
  for (std::int64_t base = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / ws * ws; base < a.rows;
       base += warps * ws) {
    const std::int64_t last = base + ws < a.rows ? base + ws : a.rows;
    const std::int64_t p0 = a.row_ptr[base], p1 = a.row_ptr[last];
    const std::int64_t row = base + lane;
    const std::int64_t b = row < a.rows ? static_cast<std::int64_t>(a.row_ptr[row]) : p1;
    const std::int64_t e = row < a.rows ? static_cast<std::int64_t>(a.row_ptr[row + 1]) : p1;
    Value s = Value(0);
    if (p1 - p0 <= WarpEntries) {  // uniform per warp
#pragma unroll 4
      for (std::int64_t q = p0 + lane; q < p1; q += ws) buf[q - p0] = product(a, x, q);
      __syncwarp();
      for (std::int64_t q = b; q < e; ++q) s += buf[q - p0];
      __syncwarp();  // buf is refilled by the next 32 rows
    } else {
      s = row_dot(a, x, b, e);
    }
    if (row < a.rows) store_row(y, row, s, alpha, beta);
  }
}

/// block_per_row: BlockThreads threads per row (chunked_dot, x gathered L2-only: with 1000 random columns
/// per row out of 2M, L1 almost never hits), reduce::block::block_reduce finishes it.
/// For uniformly long rows with few rows (20k rows of 1000: a warp per row leaves 2.4 waves of warps, the
/// last one 40 % full); spmv.cu launches a block per row and lets the block scheduler balance the tail.
template <int BlockThreads, gather G = gather::l2_only, class Value, class Index>
__global__ void __launch_bounds__(BlockThreads)
spmv_block_per_row_kernel(csr_view<Value, Index> a, Value alpha, const Value* __restrict__ x, Value beta,
                          Value* __restrict__ y) {
  using block_reduce = reduce::block::block_reduce<BlockThreads, Value>;
  __shared__ typename block_reduce::storage tmp;
  const int tid = static_cast<int>(threadIdx.x);
  for (std::int64_t row = blockIdx.x; row < a.rows; row += gridDim.x) {  // uniform per block
    Value s = chunked_dot<G>(a, x, a.row_ptr[row], a.row_ptr[row + 1], tid, BlockThreads);
    s = block_reduce::reduce(s, reduce::plus{}, tmp);
    if (tid == 0) store_row(y, row, s, alpha, beta);
    __syncthreads();  // tmp is reused by the next row
  }
}

}  // namespace sparse::detail
