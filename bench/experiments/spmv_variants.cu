// Experiment (not part of the default build; -DGPUKIT_BUILD_EXPERIMENTS=ON): cache-policy variants of
// the SpMV kernels on the gather-bound ANCHORS classes, each timed against cuSPARSE ALG1 in the same run.
//
//   spmv_variants [--once] [--classes random16,powerlaw,random1000,random2,powerlaw_10m,random_k4_10m]
//
// Question: random16, powerlaw and random1000 are bound by random 4-byte gathers of x from L2 (about
// 125-133 G gathers/s for every variant and for cuSPARSE). Does keeping x resident in L2 (evict_last
// policy), streaming the matrix entries past it (evict_first, L1::no_allocate), or bypassing L1 for x
// move that bound? On the Laplacians: grids and row pipelining of scalar, and the forms of the stencil
// kernel (which reads a pattern byte per row instead of col_idx, and must give scalar's bits).
// powerlaw_10m and random_k4_10m (the SpMV corpus's two 10M-row matrices, x of 40 MB against the 50-60 MB
// L2, where most gathers miss L2): the same policies on adaptive, x held as persisting L2 lines
// (cudaAccessPolicyWindow over x with 50-100 % of the persisting set-aside), and the columns cut into
// 2-6 panels, one pass each (the library's automatic plan on them takes two panels).
// Each variant runs the same arithmetic in the same order as the library's kernel, so
// its y must be BITWISE equal to the library default's; every variant is also compared with cuSPARSE.
// --once: one call per variant, no timing (for ncu).
#include <cuda_runtime_api.h>

#include <algorithm>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include <cub/block/block_scan.cuh>

#include "gpukit/cuda_timer.hpp"
#include "gpukit/cuda_check.hpp"
#include "gpukit/device_buffer.hpp"
#include "sparse/csr.hpp"
#include "sparse/generate.hpp"
#include "sparse/spmv.hpp"
#include "spmv_adaptive.cuh"
#include "spmv_harness.hpp"
#include "spmv_plan_state.hpp"
#include "spmv_row_kernels.cuh"

namespace {
using V = float;
using I = std::int32_t;
using sparse::detail::entry_load;
using sparse::detail::gather;

const char* name_of(entry_load e) {
  return e == entry_load::cached ? "cached" : e == entry_load::streaming ? "cs" : "once";
}
const char* name_of(gather g) {
  return g == gather::ldg ? "ldg" : g == gather::l2_only ? "cg" : g == gather::l2_keep ? "keep" : "keep_noL1";
}

struct variant {
  std::string name;
  std::function<void(cudaStream_t)> launch;
  bool is_reference = false;  // the first of its family: the others of the family must match it bitwise
  std::string family;          // variants that run the same arithmetic in the same order
};

int sm_count() {
  int d = 0, s = 0;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&d));
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&s, cudaDevAttrMultiProcessorCount, d));
  return s;
}

/// A grid of `blocks` blocks, at most `per_sm` per SM (the rest taken by grid-stride loops).
int capped_grid(std::int64_t blocks, int per_sm) {
  return static_cast<int>(std::min<std::int64_t>(blocks, std::int64_t{per_sm} * sm_count()));
}

int grid_for(std::int64_t items, std::int64_t per_block) {
  const std::int64_t wanted = (items + per_block - 1) / per_block;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(wanted, 16 * sm_count())));
}

template <int W, bool Chunked, entry_load E, gather G>
variant vector_variant(const sparse::csr_view<V, I>& a, const V* x, V* y, bool ref = false) {
  const int grid = grid_for(a.rows, 256 / W);
  return {"vector W=" + std::to_string(W) + (Chunked ? " chunked" : "") + " entries=" + name_of(E) + " x=" + name_of(G),
          [=](cudaStream_t s) {
            sparse::detail::spmv_vector_kernel<W, Chunked, E, G><<<grid, 256, 0, s>>>(a, V(1), x, V(0), y);
            GPUKIT_CHECK_LAUNCH();
          },
          ref, "vector" + std::to_string(W) + (Chunked ? "c" : "")};
}

/// As vector_variant, with `per_sm` blocks of 256 per SM at most (the library caps at 16).
template <int W, entry_load E>
variant vector_grid_variant(const sparse::csr_view<V, I>& a, const V* x, V* y, int per_sm) {
  const int grid = capped_grid((a.rows + 256 / W - 1) / (256 / W), per_sm);
  return {"vector W=" + std::to_string(W) + " entries=" + name_of(E) + " grid " + std::to_string(per_sm) + " blocks/SM",
          [=](cudaStream_t s) {
            sparse::detail::spmv_vector_kernel<W, false, E, gather::ldg><<<grid, 256, 0, s>>>(a, V(1), x, V(0), y);
            GPUKIT_CHECK_LAUNCH();
          },
          false, "vector" + std::to_string(W)};
}

/// block_per_row with Threads threads and a given grid (the library: 128 threads, rows capped at 16
/// blocks per SM): the grid decides how evenly 20k equal rows spread over the resident slots.
template <int Threads>
variant block_grid_variant(const sparse::csr_view<V, I>& a, const V* x, V* y, int grid, const std::string& why) {
  return {"block_per_row " + std::to_string(Threads) + " x=cg grid " + std::to_string(grid) + " (" + why + ")",
          [=](cudaStream_t s) {
            sparse::detail::spmv_block_per_row_kernel<Threads, gather::l2_only><<<grid, Threads, 0, s>>>(a, V(1), x, V(0), y);
            GPUKIT_CHECK_LAUNCH();
          },
          false, "block" + std::to_string(Threads)};
}

template <gather G>
variant block_variant(const sparse::csr_view<V, I>& a, const V* x, V* y, bool ref = false) {
  const int grid = grid_for(a.rows, 1);
  return {std::string("block_per_row 128 x=") + name_of(G),
          [=](cudaStream_t s) {
            sparse::detail::spmv_block_per_row_kernel<128, G><<<grid, 128, 0, s>>>(a, V(1), x, V(0), y);
            GPUKIT_CHECK_LAUNCH();
          },
          ref, "block"};
}

template <entry_load E, gather G, int MinBlocks = 8>
variant adaptive_variant(const sparse::spmv_plan<V, I>& plan, const V* x, V* y, bool ref = false) {
  const auto& st = std::get<sparse::detail::adaptive_state<V>>(plan.state().algorithm);
  const auto a = plan.matrix();
  return {std::string("adaptive entries=") + name_of(E) + " x=" + name_of(G) +
              (MinBlocks != 8 ? " min " + std::to_string(MinBlocks) + " blocks/SM" : ""),
          [=, &st](cudaStream_t s) {
            sparse::detail::spmv_adaptive_kernel<E, G, MinBlocks><<<static_cast<unsigned>(st.partition.tiles.size()),
                                                        sparse::detail::tile_threads, 0, s>>>(
                a, V(1), x, V(0), y, st.tiles.data(), st.segments.data(), st.warp_rows.data(), st.split.partials.data(),
                st.split.rows.data(), st.split.arrivals.data());
            GPUKIT_CHECK_LAUNCH();
          },
          ref, "adaptive"};
}

/// The library's adaptive kernel on a partition built here with another warp-row order (its own
/// device buffers; the rows' sums do not depend on which tile holds them: bitwise the library's).
struct owned_partition {
  sparse::detail::adaptive_partition part;
  gpukit::device_buffer<sparse::detail::spmv_tile> tiles;
  gpukit::device_buffer<sparse::detail::spmv_segment> segments;
  gpukit::device_buffer<std::int64_t> warp_rows;
  gpukit::device_buffer<sparse::detail::spmv_split_row> split_rows;
  gpukit::device_buffer<double> partials;
  gpukit::device_buffer<int> arrivals;
};

variant adaptive_order_variant(const sparse::csr_view<V, I>& a, const I* host_row_ptr, const V* x, V* y,
                               sparse::detail::warp_row_order order, const std::string& name) {
  auto o = std::make_shared<owned_partition>();
  o->part = sparse::detail::build_adaptive_partition(a.rows, host_row_ptr, order);
  o->tiles = gpukit::device_buffer<sparse::detail::spmv_tile>(o->part.tiles);
  o->segments = gpukit::device_buffer<sparse::detail::spmv_segment>(o->part.segments);
  o->warp_rows = gpukit::device_buffer<std::int64_t>(o->part.warp_rows);
  o->split_rows = gpukit::device_buffer<sparse::detail::spmv_split_row>(o->part.split_rows);
  o->partials = gpukit::device_buffer<double>(o->part.partial_slots);
  o->arrivals = gpukit::device_buffer<int>(static_cast<std::int64_t>(o->part.split_rows.size()));
  if (!o->part.split_rows.empty()) o->arrivals.fill_bytes(0);
  return {"adaptive entries=once x=ldg, " + name,
          [=](cudaStream_t s) {
            sparse::detail::spmv_adaptive_kernel<entry_load::once, gather::ldg, 8>
                <<<static_cast<unsigned>(o->part.tiles.size()), sparse::detail::tile_threads, 0, s>>>(
                    a, V(1), x, V(0), y, o->tiles.data(), o->segments.data(), o->warp_rows.data(),
                    reinterpret_cast<V*>(o->partials.data()), o->split_rows.data(), o->arrivals.data());
            GPUKIT_CHECK_LAUNCH();
          },
          false, "adaptive"};
}

// ---- experiment-local kernels ----

/// scalar, R rows per thread in lockstep: a block takes R * 256 consecutive rows, thread t rows
/// t, t + 256, ..., all R row_ptr pairs loaded first, then entry j of every row per step. Each row is
/// summed in storage order as in the library's scalar kernel, so the bits are the same; the R rows give
/// each thread R independent load chains (the library's thread has one).
template <int R>
__global__ void __launch_bounds__(256)
scalar_lockstep_kernel(sparse::csr_view<V, I> a, const V* __restrict__ x, V* __restrict__ y) {
  for (std::int64_t chunk = static_cast<std::int64_t>(blockIdx.x) * 256 * R; chunk < a.rows;
       chunk += static_cast<std::int64_t>(gridDim.x) * 256 * R) {
    std::int64_t b[R], e[R];
    V s[R];
    std::int64_t longest = 0;
#pragma unroll
    for (int k = 0; k < R; ++k) {
      const std::int64_t row = chunk + k * 256 + threadIdx.x;
      b[k] = row < a.rows ? a.row_ptr[row] : 0;
      e[k] = row < a.rows ? a.row_ptr[row + 1] : 0;
      s[k] = V(0);
      longest = e[k] - b[k] > longest ? e[k] - b[k] : longest;
    }
    for (std::int64_t j = 0; j < longest; ++j)
#pragma unroll
      for (int k = 0; k < R; ++k)
        if (b[k] + j < e[k]) s[k] += a.values[b[k] + j] * __ldg(x + a.col_idx[b[k] + j]);
#pragma unroll
    for (int k = 0; k < R; ++k) {
      const std::int64_t row = chunk + k * 256 + threadIdx.x;
      if (row < a.rows) y[row] = s[k];
    }
  }
}

/// scalar with the entries of a row loaded 4 at a time before any use (same order, same bits), and the
/// next row's row_ptr pair loaded before this row's entries (grid-stride).
__global__ void __launch_bounds__(256)
scalar_prefetch_kernel(sparse::csr_view<V, I> a, const V* __restrict__ x, V* __restrict__ y) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  std::int64_t row = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (row >= a.rows) return;
  std::int64_t b = a.row_ptr[row], e = a.row_ptr[row + 1];
  for (; row < a.rows; row += stride) {
    const std::int64_t next = row + stride;
    const std::int64_t nb = next < a.rows ? a.row_ptr[next] : 0, ne = next < a.rows ? a.row_ptr[next + 1] : 0;
    V s = V(0);
    std::int64_t p = b;
    for (; p + 4 <= e; p += 4) {
      const I c0 = a.col_idx[p], c1 = a.col_idx[p + 1], c2 = a.col_idx[p + 2], c3 = a.col_idx[p + 3];
      const V v0 = a.values[p], v1 = a.values[p + 1], v2 = a.values[p + 2], v3 = a.values[p + 3];
      const V x0 = __ldg(x + c0), x1 = __ldg(x + c1), x2 = __ldg(x + c2), x3 = __ldg(x + c3);
      s += v0 * x0;
      s += v1 * x1;
      s += v2 * x2;
      s += v3 * x3;
    }
    for (; p < e; ++p) s += a.values[p] * __ldg(x + a.col_idx[p]);
    y[row] = s;
    b = nb, e = ne;
  }
}

/// vector W=4 with the warp's entries staged: the warp's 8 rows own one contiguous stretch of entries
/// (at most Cap); lanes load it fully coalesced (each 32-byte sector once), gather x for their own
/// entries, and stage value and x in shared memory; then each row's 4 lanes sum entries l, l + 4, ...
/// from there with the same fused multiply-adds, in the same order, as vector W=4 (bitwise equal).
/// A warp whose stretch exceeds Cap runs the library's strided loop instead (uniform per warp).
template <int Cap>
__global__ void __launch_bounds__(256)
vector4_staged_kernel(sparse::csr_view<V, I> a, const V* __restrict__ x, V* __restrict__ y) {
  constexpr int W = 4, rows_per_warp = 32 / W;
  __shared__ V sv[8][Cap];
  __shared__ V sx[8][Cap];
  const int wid = static_cast<int>(threadIdx.x) / 32, l32 = static_cast<int>(threadIdx.x) % 32;
  const int lane = l32 % W, group = l32 / W;
  const std::int64_t warp = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 32;
  const std::int64_t warps = static_cast<std::int64_t>(gridDim.x) * (blockDim.x / 32);
  for (std::int64_t base = warp * rows_per_warp; base < a.rows; base += warps * rows_per_warp) {
    const std::int64_t last = base + rows_per_warp < a.rows ? base + rows_per_warp : a.rows;
    const std::int64_t p0 = a.row_ptr[base], p1 = a.row_ptr[last];
    const std::int64_t row = base + group;
    const std::int64_t b = row < a.rows ? a.row_ptr[row] : p1, e = row < a.rows ? a.row_ptr[row + 1] : p1;
    V s = V(0);
    if (p1 - p0 <= Cap) {  // uniform per warp
#pragma unroll 4
      for (std::int64_t q = p0 + l32; q < p1; q += 32) {
        sv[wid][q - p0] = a.values[q];
        sx[wid][q - p0] = __ldg(x + a.col_idx[q]);
      }
      __syncwarp();
      for (std::int64_t q = b + lane; q < e; q += W) s += sv[wid][q - p0] * sx[wid][q - p0];
      __syncwarp();  // the buffers are refilled by the next rows
    } else {
#pragma unroll 4
      for (std::int64_t q = b + lane; q < e; q += W) s += a.values[q] * __ldg(x + a.col_idx[q]);
    }
    s = reduce::warp::all_reduce<W>(s, reduce::plus{});
    if (row < a.rows && lane == 0) y[row] = s;
  }
}

/// The plan's pattern byte per row on the device, for the forms below that read row_ptr: the loop form's
/// plan keeps them; the unrolled form's packs each beside its row start (the low byte of packed_row).
std::shared_ptr<const gpukit::device_buffer<std::uint8_t>> pattern_bytes(const sparse::detail::stencil_state& st) {
  if (!st.unrolled) return {std::shared_ptr<const void>{}, &st.pattern_of_row};  // not owned: the plan's
  std::vector<std::uint16_t> packed(static_cast<std::size_t>(st.packed_row.size()));
  GPUKIT_CUDA_CHECK(cudaMemcpy(packed.data(), st.packed_row.data(), 2 * packed.size(), cudaMemcpyDeviceToHost));
  std::vector<std::uint8_t> bytes(packed.size());
  for (std::size_t r = 0; r < packed.size(); ++r) bytes[r] = static_cast<std::uint8_t>(packed[r] & 0xffu);
  return std::make_shared<const gpukit::device_buffer<std::uint8_t>>(bytes);
}

/// stencil variants that read row_ptr[row] per row, as the library kernel's loop form does (its unrolled
/// form reads packed row starts instead; `stencil unroll 8` below is that form with row_ptr):
/// Scan: the row starts from ONE row_ptr read per warp (row0 = the warp's first row) plus a warp scan
/// of the pattern lengths, so row_ptr costs 4 bytes per 32 rows instead of per row. Unroll > 0: the
/// first Unroll entries' loads are issued together (clamped to the row's last entry, in bounds), their
/// uses guarded, so a row of 5-8 entries costs one round trip. Same order, same arithmetic: bitwise scalar.
template <bool Scan, int Unroll>
__global__ void __launch_bounds__(256)
stencil_variant_kernel(sparse::csr_view<V, I> a, const std::uint8_t* __restrict__ pattern_of_row,
                       const std::int32_t* __restrict__ table, int patterns, int words, const V* __restrict__ x,
                       V* __restrict__ y) {
  __shared__ std::int32_t s_table[sparse::detail::stencil_table_words];
  const std::int32_t* off = sparse::detail::stage_stencil_table(s_table, table, patterns, words);
  const int lane = static_cast<int>(threadIdx.x) & 31;
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + (threadIdx.x & ~31u); row0 < a.rows;
       row0 += stride) {  // warp-uniform
    const std::int64_t row = row0 + lane;
    const bool live = row < a.rows;
    const int p = live ? pattern_of_row[row] : 0;
    const int first = s_table[p];
    const int len = live ? s_table[p + 1] - first : 0;
    std::int64_t begin;
    if constexpr (Scan) {
      int incl = len;
#pragma unroll
      for (int d = 1; d < 32; d <<= 1) {
        const int t = __shfl_up_sync(0xffffffffu, incl, d);
        if (lane >= d) incl += t;
      }
      begin = static_cast<std::int64_t>(a.row_ptr[row0]) + (incl - len);
    } else {
      begin = live ? static_cast<std::int64_t>(a.row_ptr[row]) : 0;
    }
    const V s = sparse::detail::stencil_row_dot<Unroll>(a, x, row, begin, off + first, len);  // the library's row
    if (live) y[row] = s;
  }
}

template <bool Scan, int Unroll>
variant stencil_variant(const sparse::spmv_plan<V, I>& plan, const V* x, V* y, int per_sm) {
  const auto& st = std::get<sparse::detail::stencil_state>(plan.state().algorithm);
  const auto pat = pattern_bytes(st);  // held by the launch lambda
  const auto a = plan.matrix();
  const int grid = capped_grid((a.rows + 255) / 256, per_sm);
  return {std::string("stencil") + (Scan ? " scan" : "") + (Unroll ? " unroll " + std::to_string(Unroll) : "") +
              ", " + std::to_string(per_sm) + " blocks/SM",
          [=, &st](cudaStream_t s) {
            stencil_variant_kernel<Scan, Unroll><<<grid, 256, 0, s>>>(a, pat->data(), st.table.data(),
                                                                     st.patterns, static_cast<int>(st.table.size()), x, y);
            GPUKIT_CHECK_LAUNCH();
          },
          false, "scalar"};
}

/// stencil, staged tiles: a block takes Threads x RPT consecutive rows (RPT consecutive
/// rows per thread), reads their pattern bytes, turns the pattern lengths into row starts with a block
/// scan from ONE row_ptr read per tile, copies the tile's values (one contiguous stretch) into shared
/// memory with coalesced loads, and gathers x while that copy is in flight. Each row is then summed in
/// storage order with the same fused multiply-adds: bitwise scalar's. Why: the thread-per-row kernels'
/// value loads touch 5-7 cache lines per warp instruction (rows 20-28 bytes apart), so L1 handles each
/// line several times; a tile's coalesced copy touches each line once, and row_ptr costs 4 bytes per
/// tile instead of per row.
template <int Threads, int RPT>
__global__ void __launch_bounds__(Threads)
stencil_staged_kernel(sparse::csr_view<V, I> a, const std::uint8_t* __restrict__ pattern_of_row,
                      const std::int32_t* __restrict__ table, int patterns, int words, int max_len,
                      const V* __restrict__ x, V* __restrict__ y) {
  using scan_t = cub::BlockScan<int, Threads>;
  __shared__ std::int32_t s_table[sparse::detail::stencil_table_words];
  __shared__ typename scan_t::TempStorage scan_tmp;
  extern __shared__ V s_vals[];  // Threads * RPT * max_len values
  const std::int32_t* off = sparse::detail::stage_stencil_table(s_table, table, patterns, words);
  constexpr int tile = Threads * RPT;
  const std::int64_t tiles = (a.rows + tile - 1) / tile;
  for (std::int64_t t = blockIdx.x; t < tiles; t += gridDim.x) {
    const std::int64_t r0 = t * tile, mine = r0 + static_cast<std::int64_t>(threadIdx.x) * RPT;
    const std::int64_t base = a.row_ptr[r0];  // the same address for every thread: one broadcast load
    int first[RPT], len[RPT], sum = 0;
#pragma unroll
    for (int j = 0; j < RPT; ++j) {
      const bool live = mine + j < a.rows;
      const int p = live ? pattern_of_row[mine + j] : 0;
      first[j] = s_table[p];
      len[j] = live ? s_table[p + 1] - first[j] : 0;
      sum += len[j];
    }
    int start = 0, total = 0;
    scan_t(scan_tmp).ExclusiveSum(sum, start, total);
    V xv[RPT][8];
#pragma unroll
    for (int j = 0; j < RPT; ++j)
#pragma unroll
      for (int k = 0; k < 8; ++k) {
        const int kk = k < len[j] ? k : (len[j] > 0 ? len[j] - 1 : 0);
        xv[j][k] = len[j] > 0 ? __ldg(x + (mine + j + off[first[j] + kk])) : V(0);
      }
    for (int i = threadIdx.x; i < total; i += Threads) s_vals[i] = a.values[base + i];
    __syncthreads();
#pragma unroll
    for (int j = 0; j < RPT; ++j) {
      V s = V(0);
#pragma unroll
      for (int k = 0; k < 8; ++k)
        if (k < len[j]) s += s_vals[start + k] * xv[j][k];
      for (int k = 8; k < len[j]; ++k) s += s_vals[start + k] * __ldg(x + (mine + j + off[first[j] + k]));
      if (mine + j < a.rows) y[mine + j] = s;
      start += len[j];
    }
    __syncthreads();  // the next tile's copy and scan reuse the shared memory
  }
}

template <int Threads, int RPT>
variant stencil_staged_variant(const sparse::spmv_plan<V, I>& plan, const V* x, V* y, int per_sm) {
  const auto& st = std::get<sparse::detail::stencil_state>(plan.state().algorithm);
  const auto pat = pattern_bytes(st);  // held by the launch lambda
  const auto a = plan.matrix();
  int max_len = 0;
  {
    std::vector<std::int32_t> t(st.table.size());
    GPUKIT_CUDA_CHECK(cudaMemcpy(t.data(), st.table.data(), 4 * t.size(), cudaMemcpyDeviceToHost));
    for (int p = 0; p < st.patterns; ++p) max_len = std::max(max_len, t[static_cast<std::size_t>(p) + 1] - t[static_cast<std::size_t>(p)]);
  }
  const int smem = Threads * RPT * max_len * static_cast<int>(sizeof(V));
  const std::int64_t tiles = (a.rows + Threads * RPT - 1) / (Threads * RPT);
  const int grid = capped_grid(tiles, per_sm);
  return {"stencil staged " + std::to_string(Threads) + "t x " + std::to_string(RPT) + " rows, " +
              std::to_string(per_sm) + " blocks/SM",
          [=, &st](cudaStream_t s) {
            stencil_staged_kernel<Threads, RPT><<<grid, Threads, smem, s>>>(
                a, pat->data(), st.table.data(), st.patterns,
                static_cast<int>(st.table.size()), max_len, x, y);
            GPUKIT_CHECK_LAUNCH();
          },
          false, "scalar"};
}

/// stencil, pipelined and/or warp-staged (same rows, same products, same order: bitwise the library's):
/// Prefetch: the next grid-stride row's pattern byte and row_ptr are loaded before this row's entries,
/// so a row waits for one round trip to memory (its entries) instead of two (its start, then its
/// entries). Stage: the warp's 32 rows own one contiguous stretch of values (at most 32 x 8 here); the
/// warp copies it to shared memory with 16-byte loads (each 128-byte line read by one instruction
/// instead of by every one of a row's 5-8 strided loads), then each thread reads its row's values from
/// there (a warp's reads k words apart, k its rows' length: conflict-free for odd k). Stage needs rows
/// of at most 8 entries (the plan's unrolled form).
constexpr int pipe_warp_words = 32 * 8 + 8;  // a warp's stretch (<= 256 values) from its 16-byte-aligned start
template <bool Prefetch, bool Stage>
__global__ void __launch_bounds__(256)
stencil_pipe_kernel(sparse::csr_view<V, I> a, const std::uint8_t* __restrict__ pattern_of_row,
                    const std::int32_t* __restrict__ table, int patterns, int words, const V* __restrict__ x,
                    V* __restrict__ y) {
  constexpr int U = sparse::detail::stencil_unrolled_row;
  __shared__ std::int32_t s_table[sparse::detail::stencil_table_words];
  __shared__ __align__(16) V s_vals[Stage ? 8 * pipe_warp_words : 4];
  const std::int32_t* off = sparse::detail::stage_stencil_table(s_table, table, patterns, words);
  const int lane = static_cast<int>(threadIdx.x) & 31;
  V* mine = s_vals + (Stage ? (threadIdx.x >> 5) * pipe_warp_words : 0);
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  std::int64_t row0 = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + (threadIdx.x & ~31u);
  int p = 0;
  std::int64_t begin = 0;
  if (Prefetch && row0 + lane < a.rows) p = pattern_of_row[row0 + lane], begin = a.row_ptr[row0 + lane];
  for (; row0 < a.rows; row0 += stride) {  // warp-uniform
    const std::int64_t row = row0 + lane;
    const bool live = row < a.rows;
    if constexpr (!Prefetch) {
      p = live ? pattern_of_row[row] : 0;
      begin = live ? static_cast<std::int64_t>(a.row_ptr[row]) : 0;
    }
    int pn = 0;
    std::int64_t bn = 0;
    if constexpr (Prefetch) {
      if (row + stride < a.rows) pn = pattern_of_row[row + stride], bn = a.row_ptr[row + stride];
    }
    const int first = s_table[p];
    const int len = live ? s_table[p + 1] - first : 0;
    V s = V(0);
    if constexpr (Stage) {
      const int last = static_cast<int>(a.rows - 1 - row0 < 31 ? a.rows - 1 - row0 : 31);
      const std::int64_t base = __shfl_sync(0xffffffffu, begin, 0) & ~std::int64_t{3};
      const std::int64_t end = __shfl_sync(0xffffffffu, begin + len, last);
      for (std::int64_t q = base + 4 * lane; q < end; q += 128) {
        if (q + 4 <= a.nnz) {
          *reinterpret_cast<float4*>(mine + (q - base)) = *reinterpret_cast<const float4*>(a.values + q);
        } else {
          for (std::int64_t t = q; t < a.nnz; ++t) mine[t - base] = a.values[t];
        }
      }
      V xv[U];
#pragma unroll
      for (int k = 0; k < U; ++k) xv[k] = len > 0 ? __ldg(x + (row + off[first + (k < len ? k : len - 1)])) : V(0);
      __syncwarp();
      const V* v = mine + (begin - base);
#pragma unroll
      for (int k = 0; k < U; ++k)
        if (k < len) s += v[k] * xv[k];
      __syncwarp();  // the next row's copy reuses the stretch
    } else {
      s = sparse::detail::stencil_row_dot<U>(a, x, row, begin, off + first, len);
    }
    if (live) y[row] = s;
    if constexpr (Prefetch) p = pn, begin = bn;
  }
}

template <bool Prefetch, bool Stage>
variant stencil_pipe_variant(const sparse::spmv_plan<V, I>& plan, const V* x, V* y, int per_sm) {
  const auto& st = std::get<sparse::detail::stencil_state>(plan.state().algorithm);
  const auto pat = pattern_bytes(st);  // held by the launch lambda
  if (Stage && !st.unrolled) throw std::runtime_error("stencil warp-staged: rows of more than 8 entries");
  const auto a = plan.matrix();
  const int grid = capped_grid((a.rows + 255) / 256, per_sm);
  cudaFuncAttributes attr{};
  GPUKIT_CUDA_CHECK(cudaFuncGetAttributes(&attr, stencil_pipe_kernel<Prefetch, Stage>));
  return {std::string("stencil unroll 8") + (Prefetch ? " + next row's start prefetched" : "") +
              (Stage ? " + warp-staged values" : "") + ", " + std::to_string(per_sm) + " blocks/SM, " +
              std::to_string(attr.numRegs) + " regs",
          [=, &st](cudaStream_t s) {
            stencil_pipe_kernel<Prefetch, Stage><<<grid, 256, 0, s>>>(a, pat->data(), st.table.data(),
                                                                     st.patterns, static_cast<int>(st.table.size()), x, y);
            GPUKIT_CHECK_LAUNCH();
          },
          false, "scalar"};
}

std::vector<variant> stencil_variants(const sparse::spmv_plan<V, I>& plan, const V* x, V* y) {
  std::vector<variant> vs;
  vs.push_back({"stencil (library)", [&plan, x, y](cudaStream_t s) { sparse::spmv(plan, V(1), x, V(0), y, s); }, false,
                "scalar"});
  vs.push_back(stencil_variant<false, 0>(plan, x, y, 8));
  vs.push_back(stencil_variant<true, 0>(plan, x, y, 8));
  vs.push_back(stencil_variant<false, 8>(plan, x, y, 8));
  vs.push_back(stencil_variant<true, 8>(plan, x, y, 8));
  vs.push_back(stencil_variant<true, 8>(plan, x, y, 16));
  vs.push_back(stencil_variant<true, 8>(plan, x, y, 64));
  vs.push_back(stencil_staged_variant<256, 1>(plan, x, y, 8));
  vs.push_back(stencil_staged_variant<128, 2>(plan, x, y, 16));
  vs.push_back(stencil_pipe_variant<true, false>(plan, x, y, 8));
  vs.push_back(stencil_pipe_variant<false, true>(plan, x, y, 8));
  vs.push_back(stencil_pipe_variant<true, true>(plan, x, y, 8));
  return vs;
}

/// vector W=16 with R rows per half-warp in lockstep: each instruction reads one 16-entry stretch of
/// each of R rows (every entry sector touched once, as W=16), and R gathers are in flight per lane (as
/// W=4's four). Loads clamped to the row's last entry and issued together, uses guarded. Lane l sums
/// entries l, l + 16, ... of its row, then reduce::warp::all_reduce<16>: bitwise the library's W=16.
template <int R>
__global__ void __launch_bounds__(256)
vector16_lockstep_kernel(sparse::csr_view<V, I> a, const V* __restrict__ x, V* __restrict__ y) {
  const int lane = static_cast<int>(threadIdx.x) & 15;
  const std::int64_t hw = (static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x) / 16;
  const std::int64_t nhw = static_cast<std::int64_t>(gridDim.x) * blockDim.x / 16;
  for (std::int64_t base = hw * R; base < a.rows; base += nhw * R) {  // uniform per half-warp
    std::int64_t b[R], e[R];
    V s[R];
    std::int64_t longest = 0;
#pragma unroll
    for (int k = 0; k < R; ++k) {
      const std::int64_t row = base + k;
      b[k] = row < a.rows ? a.row_ptr[row] : 0;
      e[k] = row < a.rows ? a.row_ptr[row + 1] : 0;
      s[k] = V(0);
      longest = e[k] - b[k] > longest ? e[k] - b[k] : longest;
    }
    for (std::int64_t j = lane; j < longest + 15 - (longest + 15) % 16 ; j += 16) {
      V v[R], xv[R];
#pragma unroll
      for (int k = 0; k < R; ++k) {
        const std::int64_t q = b[k] + j < e[k] ? b[k] + j : (e[k] > b[k] ? e[k] - 1 : b[k]);
        const bool any = e[k] > b[k];
        v[k] = any ? a.values[q] : V(0);
        xv[k] = any ? __ldg(x + a.col_idx[q]) : V(0);
      }
#pragma unroll
      for (int k = 0; k < R; ++k)
        if (b[k] + j < e[k]) s[k] += v[k] * xv[k];
    }
#pragma unroll
    for (int k = 0; k < R; ++k) s[k] = reduce::warp::all_reduce<16>(s[k], reduce::plus{});
    if (lane == 0) {
#pragma unroll
      for (int k = 0; k < R; ++k)
        if (base + k < a.rows) y[base + k] = s[k];
    }
  }
}

template <int R>
variant vector16_lockstep_variant(const sparse::csr_view<V, I>& a, const V* x, V* y, int per_sm) {
  const int grid = capped_grid((a.rows + 16 * R - 1) / (16 * R), per_sm);
  return {"vector W=16, " + std::to_string(R) + " rows per half-warp in lockstep, " + std::to_string(per_sm) + " blocks/SM",
          [=](cudaStream_t s) {
            vector16_lockstep_kernel<R><<<grid, 256, 0, s>>>(a, x, y);
            GPUKIT_CHECK_LAUNCH();
          },
          false, "vector16"};
}

std::vector<variant> laplace_variants(const sparse::csr_view<V, I>& a, const V* x, V* y) {
  std::vector<variant> vs;
  const int capped = grid_for(a.rows, 256);
  int resident = 0;
  GPUKIT_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&resident, sparse::detail::spmv_scalar_kernel<V, I>, 256, 0));
  const int wave = std::min(capped, resident * sm_count());
  vs.push_back({"scalar (library: one wave, " + std::to_string(resident) + " blocks/SM)", [=](cudaStream_t s) {
                  sparse::detail::spmv_scalar_kernel<<<wave, 256, 0, s>>>(a, V(1), x, V(0), y);
                  GPUKIT_CHECK_LAUNCH();
                }, true, "scalar"});
  const int full = static_cast<int>((a.rows + 255) / 256);
  vs.push_back({"scalar, a thread per row (full grid)", [=](cudaStream_t s) {
                  sparse::detail::spmv_scalar_kernel<<<full, 256, 0, s>>>(a, V(1), x, V(0), y);
                  GPUKIT_CHECK_LAUNCH();
                }, false, "scalar"});
  vs.push_back({"scalar, 4 entries per load step + row_ptr prefetch", [=](cudaStream_t s) {
                  scalar_prefetch_kernel<<<capped, 256, 0, s>>>(a, x, y);
                  GPUKIT_CHECK_LAUNCH();
                }, false, "scalar"});
  for (int per_sm : {4, 6, 12, 16}) {
    const int g = capped_grid(full, per_sm);
    vs.push_back({"scalar, grid " + std::to_string(per_sm) + " blocks/SM", [=](cudaStream_t s) {
                    sparse::detail::spmv_scalar_kernel<<<g, 256, 0, s>>>(a, V(1), x, V(0), y);
                    GPUKIT_CHECK_LAUNCH();
                  }, false, "scalar"});
  }
  const int g2 = grid_for((a.rows + 1) / 2, 256), g4 = grid_for((a.rows + 3) / 4, 256);
  vs.push_back({"scalar, 2 rows per thread in lockstep", [=](cudaStream_t s) {
                  scalar_lockstep_kernel<2><<<g2, 256, 0, s>>>(a, x, y);
                  GPUKIT_CHECK_LAUNCH();
                }, false, "scalar"});
  vs.push_back({"scalar, 4 rows per thread in lockstep", [=](cudaStream_t s) {
                  scalar_lockstep_kernel<4><<<g4, 256, 0, s>>>(a, x, y);
                  GPUKIT_CHECK_LAUNCH();
                }, false, "scalar"});
  vs.push_back(vector_variant<2, false, entry_load::cached, gather::ldg>(a, x, y, true));
  return vs;
}

/// The columns cut into `panels` equal ranges, each range a CSR matrix of all the rows (columns relative
/// to the range's start), so that one pass gathers only its range of x.
std::vector<sparse::host_csr<V, I>> column_panels(const sparse::host_csr<V, I>& h, int panels) {
  const std::int64_t rows = h.rows(), cols = h.cols(), width = (cols + panels - 1) / panels;
  std::vector<std::vector<I>> rp(panels, std::vector<I>(static_cast<std::size_t>(rows + 1), 0)), ci(panels);
  std::vector<std::vector<V>> vals(panels);
  for (std::int64_t r = 0; r < rows; ++r) {
    for (I p = h.row_ptr()[r]; p < h.row_ptr()[r + 1]; ++p) {
      const std::int64_t c = h.col_idx()[p];
      const int k = static_cast<int>(c / width);
      ci[k].push_back(static_cast<I>(c - k * width));
      vals[k].push_back(h.values()[p]);
    }
    for (int k = 0; k < panels; ++k) rp[k][r + 1] = static_cast<I>(ci[k].size());
  }
  std::vector<sparse::host_csr<V, I>> out;
  for (int k = 0; k < panels; ++k) {
    const std::int64_t w = std::min(width, cols - k * width);
    out.emplace_back(rows, w, std::move(rp[k]), std::move(ci[k]), std::move(vals[k]));
  }
  return out;
}

/// y = A x as `panels` passes over column panels (column_panels): the first with beta 0, the others adding
/// to y (beta 1), each on the panel's automatic plan; timed against ALG1, checked against its y.
bool time_column_panels(const sparse::host_csr<V, I>& h, sparse::cusparse_spmv<V, I>& peer,
                        const experiments::peer_reference<V, I>& ref, const V* x, V* y, cudaStream_t stream) {
  bool ok = true;
  gpukit::cuda_timer timer(stream);
  {
    const sparse::device_csr<V, I> d(h);
    const sparse::spmv_plan<V, I> automatic(d);
    auto run = [&] { sparse::spmv(automatic, V(1), x, V(0), y, stream); };
    const double us = timer.time(run, {5, 41}).median_us, alg1 = timer.time([&] { peer.run(V(1), V(0), stream); }, {5, 41}).median_us;
    double worst = 0;
    const bool close = ref.close(experiments::fetch(y, h.rows()), &worst);
    ok = ok && close;
    std::printf("  library automatic (%s): %.1f us, ALG1 %.1f (%.3fx)%s\n", automatic.describe().c_str(), us, alg1,
                alg1 / us, close ? "" : "  FAR FROM cuSPARSE");
  }
  for (int panels : {2, 3, 4, 6}) {
    const auto parts = column_panels(h, panels);
    std::vector<std::unique_ptr<sparse::device_csr<V, I>>> dev;
    std::vector<std::unique_ptr<sparse::spmv_plan<V, I>>> plans;
    for (const auto& part : parts) {
      dev.push_back(std::make_unique<sparse::device_csr<V, I>>(part));
      plans.push_back(std::make_unique<sparse::spmv_plan<V, I>>(*dev.back()));
    }
    const std::int64_t width = parts[0].cols();
    auto run = [&] {
      for (int k = 0; k < panels; ++k)
        sparse::spmv(*plans[k], V(1), x + k * width, k == 0 ? V(0) : V(1), y, stream);
    };
    GPUKIT_CUDA_CHECK(cudaMemsetAsync(y, 0xFF, sizeof(V) * static_cast<std::size_t>(h.rows()), stream));
    run();
    GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
    double worst = 0;
    const bool close = ref.close(experiments::fetch(y, h.rows()), &worst);
    ok = ok && close;
    const double us = timer.time(run, {5, 41}).median_us, alg1 = timer.time([&] { peer.run(V(1), V(0), stream); }, {5, 41}).median_us;
    std::printf("  column panels: %d of %lld columns (%s): %.1f us, ALG1 %.1f (%.3fx), max|diff| %.2e%s\n", panels,
                static_cast<long long>(width), plans[0]->describe().c_str(), us, alg1, alg1 / us, worst,
                close ? "" : "  FAR FROM cuSPARSE");
  }
  return ok;
}

/// The library's adaptive kernel and ALG1 with x in a persisting L2 window (the device's whole persisting
/// set-aside, hit ratio set-aside / x bytes), then without it again; the window and the set-aside are
/// removed afterwards (cudaCtxResetPersistingL2Cache), so later classes see a plain L2.
bool time_with_x_window(const sparse::spmv_plan<V, I>& plan, const sparse::csr_view<V, I>& a,
                        sparse::cusparse_spmv<V, I>& peer, const V* x, V* y, cudaStream_t stream, std::int64_t bytes) {
  cudaDeviceProp prop{};
  int dev = 0;
  GPUKIT_CUDA_CHECK(cudaGetDevice(&dev));
  GPUKIT_CUDA_CHECK(cudaGetDeviceProperties(&prop, dev));
  std::size_t old_limit = 0;
  GPUKIT_CUDA_CHECK(cudaDeviceGetLimit(&old_limit, cudaLimitPersistingL2CacheSize));
  const std::size_t x_bytes = sizeof(V) * static_cast<std::size_t>(a.cols);
  gpukit::cuda_timer timer(stream);
  auto library = [&] { sparse::spmv(plan, V(1), x, V(0), y, stream); };
  auto alg1 = [&] { peer.run(V(1), V(0), stream); };
  const double base_ours = timer.time(library, {5, 41}).median_us, base_peer = timer.time(alg1, {5, 41}).median_us;
  for (double share : {1.0, 0.75, 0.5}) {
    const std::size_t limit = static_cast<std::size_t>(share * static_cast<double>(prop.persistingL2CacheMaxSize));
    GPUKIT_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, limit));
    cudaStreamAttrValue attr{};
    attr.accessPolicyWindow.base_ptr = const_cast<V*>(x);
    attr.accessPolicyWindow.num_bytes = std::min<std::size_t>(x_bytes, static_cast<std::size_t>(prop.accessPolicyMaxWindowSize));
    attr.accessPolicyWindow.hitRatio = static_cast<float>(std::min(1.0, static_cast<double>(limit) / static_cast<double>(attr.accessPolicyWindow.num_bytes)));
    attr.accessPolicyWindow.hitProp = cudaAccessPropertyPersisting;
    attr.accessPolicyWindow.missProp = cudaAccessPropertyStreaming;
    GPUKIT_CUDA_CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr));
    const double ours = timer.time(library, {5, 41}).median_us, theirs = timer.time(alg1, {5, 41}).median_us;
    attr.accessPolicyWindow.num_bytes = 0;
    GPUKIT_CUDA_CHECK(cudaStreamSetAttribute(stream, cudaStreamAttributeAccessPolicyWindow, &attr));
    GPUKIT_CUDA_CHECK(cudaCtxResetPersistingL2Cache());
    GPUKIT_CUDA_CHECK(cudaDeviceSetLimit(cudaLimitPersistingL2CacheSize, old_limit));
    std::printf("  x window (set-aside %.1f MB of %.1f, hit ratio %.2f): library %.1f us (%.1f without), ALG1 %.1f (%.1f without); %.0f GB/s\n",
                limit / 1e6, prop.persistingL2CacheMaxSize / 1e6, attr.accessPolicyWindow.hitRatio, ours, base_ours,
                theirs, base_peer, bytes / ours / 1e3);
  }
  return true;
}

bool run_class(const sparse::benchmark_matrix& m, bool once, cudaStream_t stream) {
  const auto host = sparse::generate<V, I>(m.params);
  sparse::device_csr<V, I> d(host);
  const auto a = d.view();
  const std::vector<V> hx = experiments::fixed_random_x<V>(a.cols);
  gpukit::device_buffer<V> x(hx.size()), y(static_cast<std::size_t>(a.rows)), y_peer(static_cast<std::size_t>(a.rows));
  GPUKIT_CUDA_CHECK(cudaMemcpy(x.data(), hx.data(), sizeof(V) * hx.size(), cudaMemcpyHostToDevice));
  const std::int64_t bytes = a.nnz * static_cast<std::int64_t>(sizeof(V) + sizeof(I)) + (a.rows + 1) * 4 +
                             a.cols * 4 + a.rows * 4;

  std::vector<variant> vs;
  std::unique_ptr<sparse::spmv_plan<V, I>> plan;
  if (m.name == "random16") {
    vs.push_back(vector_variant<4, false, entry_load::cached, gather::ldg>(a, x.data(), y.data(), true));
    {
      const int grid = grid_for(a.rows, 256 / 4);
      const auto av = a;
      V* yp = y.data();
      const V* xp = x.data();
      vs.push_back({"vector W=4 staged (coalesced entries, smem)", [=](cudaStream_t s) {
                      vector4_staged_kernel<256><<<grid, 256, 0, s>>>(av, xp, yp);
                      GPUKIT_CHECK_LAUNCH();
                    }, false, "vector4"});
    }
    vs.push_back(vector_grid_variant<4, entry_load::cached>(a, x.data(), y.data(), 8));
    vs.push_back(vector_variant<4, false, entry_load::cached, gather::l2_only>(a, x.data(), y.data()));
    vs.push_back(vector_variant<4, false, entry_load::cached, gather::l2_keep>(a, x.data(), y.data()));
    vs.push_back(vector_variant<4, false, entry_load::cached, gather::l2_keep_noalloc>(a, x.data(), y.data()));
    vs.push_back(vector_variant<4, false, entry_load::streaming, gather::ldg>(a, x.data(), y.data()));
    vs.push_back(vector_variant<4, false, entry_load::streaming, gather::l2_keep>(a, x.data(), y.data()));
    vs.push_back(vector_variant<4, false, entry_load::once, gather::ldg>(a, x.data(), y.data()));
    vs.push_back(vector_variant<4, false, entry_load::once, gather::l2_keep>(a, x.data(), y.data()));
    vs.push_back(vector_variant<4, false, entry_load::once, gather::l2_keep_noalloc>(a, x.data(), y.data()));
    vs.push_back(vector_variant<8, false, entry_load::cached, gather::ldg>(a, x.data(), y.data()));
    // 16 or 32 lanes per ~16-entry row: each load instruction covers a row's whole stretch, so every
    // 32-byte sector of the entries is touched once (the fewest L2 sectors), at the cost of wider trees.
    vs.push_back(vector_variant<16, false, entry_load::cached, gather::ldg>(a, x.data(), y.data()));
    vs.push_back(vector16_lockstep_variant<2>(a, x.data(), y.data(), 8));
    vs.push_back(vector16_lockstep_variant<4>(a, x.data(), y.data(), 8));
    vs.push_back(vector16_lockstep_variant<4>(a, x.data(), y.data(), 16));
    vs.push_back(vector16_lockstep_variant<8>(a, x.data(), y.data(), 8));
    vs.push_back(vector_variant<16, false, entry_load::once, gather::ldg>(a, x.data(), y.data()));
    vs.push_back(vector_variant<32, false, entry_load::cached, gather::ldg>(a, x.data(), y.data()));
    vs.push_back(vector_variant<4, true, entry_load::cached, gather::ldg>(a, x.data(), y.data()));
    vs.push_back(vector_variant<4, true, entry_load::cached, gather::l2_only>(a, x.data(), y.data()));
  } else if (m.name == "laplace2d" || m.name == "laplace3d") {
    vs = laplace_variants(a, x.data(), y.data());
    plan = std::make_unique<sparse::spmv_plan<V, I>>(d, sparse::spmv_algorithm::stencil);
    for (auto& v : stencil_variants(*plan, x.data(), y.data())) vs.push_back(std::move(v));
  } else if (m.name == "random2") {
    vs.push_back(vector_variant<2, false, entry_load::streaming, gather::ldg>(a, x.data(), y.data(), true));
    vs.push_back(vector_grid_variant<2, entry_load::streaming>(a, x.data(), y.data(), 8));
    vs.push_back(vector_variant<2, false, entry_load::streaming, gather::l2_keep>(a, x.data(), y.data()));
    vs.push_back(vector_variant<2, false, entry_load::once, gather::ldg>(a, x.data(), y.data()));
    vs.push_back(vector_variant<2, false, entry_load::once, gather::l2_keep>(a, x.data(), y.data()));
    vs.push_back(vector_variant<2, false, entry_load::once, gather::l2_keep_noalloc>(a, x.data(), y.data()));
  } else if (m.name == "random1000") {
    vs.push_back(block_grid_variant<256>(a, x.data(), y.data(), static_cast<int>(a.rows), "library: a block per row"));
    vs.push_back(block_variant<gather::l2_only>(a, x.data(), y.data(), true));
    {
      const std::int64_t rows = a.rows, sms = sm_count();
      auto even = [&](std::int64_t slots) {  // fewest blocks that keep every block's row count equal
        const std::int64_t per = (rows + slots - 1) / slots;
        return static_cast<int>((rows + per - 1) / per);
      };
      vs.push_back(block_grid_variant<128>(a, x.data(), y.data(), even(16 * sms), "equal rows per block"));
      vs.push_back(block_grid_variant<256>(a, x.data(), y.data(), static_cast<int>(std::min<std::int64_t>(rows, 8 * sms)), "one wave"));
      vs.push_back(block_grid_variant<512>(a, x.data(), y.data(), static_cast<int>(std::min<std::int64_t>(rows, 4 * sms)), "one wave"));
    }
    vs.push_back(block_variant<gather::ldg>(a, x.data(), y.data()));
    vs.push_back(block_variant<gather::l2_keep>(a, x.data(), y.data()));
    vs.push_back(block_variant<gather::l2_keep_noalloc>(a, x.data(), y.data()));
  } else if (m.name == "powerlaw") {
    plan = std::make_unique<sparse::spmv_plan<V, I>>(d, sparse::spmv_algorithm::adaptive);
    vs.push_back(adaptive_variant<entry_load::cached, gather::ldg>(*plan, x.data(), y.data(), true));
    vs.push_back(adaptive_variant<entry_load::cached, gather::l2_only>(*plan, x.data(), y.data()));
    vs.push_back(adaptive_variant<entry_load::cached, gather::l2_keep>(*plan, x.data(), y.data()));
    vs.push_back(adaptive_variant<entry_load::cached, gather::l2_keep_noalloc>(*plan, x.data(), y.data()));
    vs.push_back(adaptive_variant<entry_load::once, gather::ldg>(*plan, x.data(), y.data()));
    // Occupancy: the library caps registers for 8 resident blocks per SM (32 registers). At 4 or 6 the
    // kernel has 39 registers, 6 resident blocks (66 % of warps active in ncu; cuSPARSE 93 %).
    vs.push_back(adaptive_variant<entry_load::once, gather::ldg, 4>(*plan, x.data(), y.data()));
    vs.push_back(adaptive_variant<entry_load::once, gather::ldg, 6>(*plan, x.data(), y.data()));
    vs.push_back(adaptive_variant<entry_load::once, gather::l2_keep>(*plan, x.data(), y.data()));
    vs.push_back(adaptive_variant<entry_load::once, gather::l2_keep_noalloc>(*plan, x.data(), y.data()));
    // Warp tiles of similar rows: medium rows longest first (the library's order) or in row order.
    vs.push_back(adaptive_order_variant(a, host.row_ptr().data(), x.data(), y.data(),
                                        sparse::detail::warp_row_order::by_row, "warp rows by row"));
    vs.push_back(adaptive_order_variant(a, host.row_ptr().data(), x.data(), y.data(),
                                        sparse::detail::warp_row_order::longest_first, "warp rows longest first (library)"));
  } else if (m.name == "powerlaw_10m" || m.name == "random_k4_10m") {
    // x of 40 MB against the 50 MB L2: the gathers' policy may decide whether x stays there.
    plan = std::make_unique<sparse::spmv_plan<V, I>>(d, sparse::spmv_algorithm::adaptive);
    vs.push_back(adaptive_variant<entry_load::once, gather::ldg>(*plan, x.data(), y.data(), true));
    vs.push_back(adaptive_variant<entry_load::once, gather::l2_keep>(*plan, x.data(), y.data()));
    vs.push_back(adaptive_variant<entry_load::once, gather::l2_keep_noalloc>(*plan, x.data(), y.data()));
    vs.push_back(adaptive_variant<entry_load::once, gather::l2_only>(*plan, x.data(), y.data()));
    vs.push_back(adaptive_variant<entry_load::streaming, gather::l2_keep>(*plan, x.data(), y.data()));
    vs.push_back(adaptive_variant<entry_load::streaming, gather::ldg>(*plan, x.data(), y.data()));
    vs.push_back(adaptive_variant<entry_load::cached, gather::ldg>(*plan, x.data(), y.data()));
    if (m.name == "random_k4_10m") {
      vs.push_back(vector_variant<2, false, entry_load::streaming, gather::ldg>(a, x.data(), y.data(), true));
      vs.push_back(vector_variant<2, false, entry_load::streaming, gather::l2_keep>(a, x.data(), y.data()));
      vs.push_back(vector_variant<2, false, entry_load::once, gather::l2_keep_noalloc>(a, x.data(), y.data()));
      vs.push_back(vector_variant<4, false, entry_load::once, gather::l2_keep_noalloc>(a, x.data(), y.data()));
    }
  } else {
    std::fprintf(stderr, "spmv_variants: no variants for class %s\n", m.name.c_str());
    return false;
  }

  sparse::cusparse_spmv<V, I> peer(a, sparse::cusparse_algorithm::alg1, x.data(), y_peer.data(), V(1), V(0), stream);
  const auto ref_peer = experiments::run_peer(peer, y_peer.data(), a.rows, stream);

  bool ok = true;
  std::map<std::string, std::vector<V>> ref_bits;
  gpukit::cuda_timer timer(stream);
  std::printf("\n%s: %lld rows, %lld cols, %lld entries, %.1f MB minimum traffic\n", m.name.c_str(),
              static_cast<long long>(a.rows), static_cast<long long>(a.cols), static_cast<long long>(a.nnz), bytes / 1e6);
  double alg1_us = 0;
  if (!once) {
    alg1_us = timer.time([&] { peer.run(V(1), V(0), stream); }, {5, 41}).median_us;
    std::printf("  %-52s %9.1f us %7.0f GB/s\n", "cuSPARSE ALG1", alg1_us, bytes / alg1_us / 1e3);
  }
  for (int round = 0; round < (once ? 1 : 2); ++round) {
    for (auto& v : vs) {
      GPUKIT_CUDA_CHECK(cudaMemsetAsync(y.data(), 0xFF, sizeof(V) * static_cast<std::size_t>(a.rows), stream));  // NaN poison
      v.launch(stream);
      GPUKIT_CUDA_CHECK(cudaStreamSynchronize(stream));
      const auto got = experiments::fetch(y.data(), a.rows);
      auto& ref = ref_bits[v.family];
      if (ref.empty()) ref = got;  // the family's first variant (the library's choice comes first)
      const bool same = std::memcmp(got.data(), ref.data(), sizeof(V) * got.size()) == 0;
      const bool close = ref_peer.close(got, nullptr);
      if (!same || !close) ok = false;
      if (once) {
        std::printf("  %-52s %s\n", v.name.c_str(), same && close ? "ok" : "MISMATCH");
        continue;
      }
      const double us = timer.time([&] { v.launch(stream); }, {5, 41}).median_us;
      std::printf("  %-52s %9.1f us %7.0f GB/s  %.3fx ALG1  %s%s\n", v.name.c_str(), us, bytes / us / 1e3,
                  alg1_us / us, same ? "bitwise=ref" : "BITS DIFFER", close ? "" : "  FAR FROM cuSPARSE");
    }
  }
  if (!once && plan && (m.name == "powerlaw_10m" || m.name == "random_k4_10m"))
    ok = time_with_x_window(*plan, a, peer, x.data(), y.data(), stream, bytes) && ok;
  if (!once && (m.name == "powerlaw_10m" || m.name == "random_k4_10m" || m.name == "random2"))
    ok = time_column_panels(host, peer, ref_peer, x.data(), y.data(), stream) && ok;
  return ok;
}
}  // namespace

int main(int argc, char** argv) {
  bool once = false;
  std::vector<std::string> classes{"laplace2d",  "laplace3d", "random16",     "powerlaw",
                                   "random1000", "random2",   "powerlaw_10m", "random_k4_10m"};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--once") once = true;
    else if (a == "--classes" && i + 1 < argc) classes = experiments::split_commas(argv[++i]);
    else {
      std::fprintf(stderr, "usage: spmv_variants [--once] [--classes a,b]\n");
      return 2;
    }
  }
  // The corpus's two 10M-row matrices whose x (40 MB) nearly fills the L2 (apps/spmv/corpus.cpp).
  std::vector<sparse::benchmark_matrix> large;
  for (const auto& c : classes) {
    sparse::benchmark_matrix m;
    m.name = c;
    m.params.rows = 10000000;
    if (c == "powerlaw_10m") m.params.kind = sparse::matrix_class::power_law;
    else if (c == "random_k4_10m") m.params.kind = sparse::matrix_class::random_k, m.params.k = 4;
    else continue;
    large.push_back(m);
  }
  return experiments::run_classes("spmv_variants", classes,
                                  "all variants bitwise equal to the library kernel and close to cuSPARSE",
                                  [&](const sparse::benchmark_matrix& m, cudaStream_t s) { return run_class(m, once, s); },
                                  nullptr, large);
}
