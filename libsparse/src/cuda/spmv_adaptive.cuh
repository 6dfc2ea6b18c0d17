// The adaptive SpMV kernel (one 256-thread block per tile of the plan's partition, see
// spmv_adaptive_plan.hpp). Device code only. Deterministic: a short row is summed by one thread in storage
// order; a medium row by a warp (lane strides, then libreduce's fixed warp tree); a long row by a block
// (thread strides, block_reduce); a split row's chunk partials are summed in chunk order by the block
// that writes the last of them (finish_split), inside the same launch: a separate combine kernel cost
// 3.5-3.9 us of powerlaw's 61-62 us on an H200 (ncu, bench/experiments/README.md).
#pragma once
#include <cstdint>

#include "reduce/cuda/block_reduce.cuh"
#include "reduce/cuda/warp_reduce.cuh"
#include "spmv_adaptive_plan.hpp"
#include "spmv_row_kernels.cuh"

namespace sparse::detail {

/// The segment (of a stream tile's <= 8) holding tile entry or tile row `i`: the last one whose `field`
/// (q0 for entries, r0 for rows) is <= i. A linear scan: one or two segments in most tiles.
__device__ __forceinline__ int segment_of(const spmv_segment* seg, int nseg, int i, std::int32_t spmv_segment::*field) {
  int k = 0;
  while (k + 1 < nseg && seg[k + 1].*field <= i) ++k;
  return k;
}

/// Reduce phase of a stream tile: Lanes lanes per row (a group of consecutive lanes), entries read from
/// shared memory in storage order per lane, then reduce::warp::all_reduce<Lanes> (fixed order). The loop
/// bound is uniform over the block, so every lane of a warp reaches each shuffle.
template <int Lanes, class Value>
__device__ __forceinline__ void stream_rows(int rows, const spmv_segment* seg, int nseg, const int* ends,
                                            const Value* staged, Value alpha, Value beta, Value* __restrict__ y) {
  constexpr int groups = tile_threads / Lanes;
  const int lane = static_cast<int>(threadIdx.x) % Lanes, group = static_cast<int>(threadIdx.x) / Lanes;
  for (int base = 0; base < rows; base += groups) {
    const int r = base + group;
    Value s = Value(0);
    int k = 0;
    if (r < rows) {
      k = segment_of(seg, nseg, r, &spmv_segment::r0);
      const int b = r == seg[k].r0 ? seg[k].q0 : ends[r - 1];
      for (int q = b + lane; q < ends[r]; q += Lanes) s += staged[q];
    }
    if constexpr (Lanes > 1) s = reduce::warp::all_reduce<Lanes>(s, reduce::plus{});
    if (r < rows && lane == 0) store_row(y, seg[k].first_row + (r - seg[k].r0), s, alpha, beta);
  }
}

/// E and G: how entries are loaded and x gathered (spmv_row_kernels.cuh); MinBlocks: resident blocks per
/// SM the register allocation must allow (__launch_bounds__).
template <entry_load E = entry_load::cached, gather G = gather::ldg, int MinBlocks = 8, class Value, class Index>
__global__ void __launch_bounds__(tile_threads, MinBlocks)
spmv_adaptive_kernel(csr_view<Value, Index> a, Value alpha, const Value* __restrict__ x, Value beta,
                     Value* __restrict__ y, const spmv_tile* __restrict__ tiles,
                     const spmv_segment* __restrict__ segments, const std::int64_t* __restrict__ warp_rows,
                     Value* partials, const spmv_split_row* __restrict__ split_rows, int* arrivals) {
  using block_reduce = reduce::block::block_reduce<tile_threads, Value>;
  __shared__ Value staged[stream_tile_entries];
  __shared__ typename block_reduce::storage tmp;
  __shared__ spmv_segment seg[stream_tile_segments];
  __shared__ int ends[stream_tile_rows];  // stream: each row's end offset in `staged`
  constexpr int ws = reduce::warp::warp_size;
  const spmv_tile t = tiles[blockIdx.x];
  const int tid = static_cast<int>(threadIdx.x);

  if (t.kind == tile_stream) {
    // CSR-stream: each segment's entries are contiguous, so the products a_ij * x_j are formed with fully
    // coalesced loads (8 independent loads per thread) and staged in shared memory, together with each
    // row's end offset; then rows are summed from shared memory by t.lanes lanes each.
    const int nseg = t.count;
    if (tid < nseg) seg[tid] = segments[t.first + tid];
    __syncthreads();
#pragma unroll
    for (int k = 0; k < stream_tile_entries / tile_threads; ++k) {
      const int q = tid + k * tile_threads;
      if (q < t.entries) {
        const spmv_segment& sg = seg[segment_of(seg, nseg, q, &spmv_segment::q0)];
        const std::int64_t p = sg.p0 + (q - sg.q0);
        staged[q] = product<Value, Index, G, E>(a, x, p);
      }
    }
    for (int r = tid; r < t.rows; r += tile_threads) {  // issued with the loads above: no extra latency
      const spmv_segment& sg = seg[segment_of(seg, nseg, r, &spmv_segment::r0)];
      ends[r] = static_cast<int>(a.row_ptr[sg.first_row + (r - sg.r0) + 1] - sg.p0) + sg.q0;
    }
    __syncthreads();
    if (t.lanes == 1) stream_rows<1>(t.rows, seg, nseg, ends, staged, alpha, beta, y);  // stream_lanes: 1, 16 or 32
    else if (t.lanes == 16) stream_rows<16>(t.rows, seg, nseg, ends, staged, alpha, beta, y);
    else stream_rows<32>(t.rows, seg, nseg, ends, staged, alpha, beta, y);
  } else if (t.kind == tile_warp) {
    const int w = tid / ws, lane = tid % ws;
    if (w < t.count) {  // uniform per warp
      const std::int64_t row = warp_rows[t.first + w];
      Value s = strided_dot<E, G>(a, x, a.row_ptr[row], a.row_ptr[row + 1], lane, ws);
      s = reduce::warp::reduce_to_first(s, reduce::plus{});
      if (lane == 0) store_row(y, row, s, alpha, beta);
    }
  } else {
    // A whole long row (block) or one chunk of a very long row (split).
    const bool whole = t.kind == tile_block;
    const std::int64_t begin = whole ? static_cast<std::int64_t>(a.row_ptr[t.first]) : t.begin;
    const std::int64_t end = whole ? static_cast<std::int64_t>(a.row_ptr[t.first + 1]) : t.begin + t.count;
    Value s = strided_dot<E, G>(a, x, begin, end, tid, tile_threads);
    s = block_reduce::reduce(s, reduce::plus{}, tmp);
    if (tid == 0) {
      if (whole) store_row(y, t.first, s, alpha, beta);
      else finish_split(t.split, t.slot, s, split_rows, arrivals, partials, alpha, beta, y);
    }
  }
}

}  // namespace sparse::detail
