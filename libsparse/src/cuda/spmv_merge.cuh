// The merge (nnz-balanced) SpMV kernel: the merge-path decomposition of Merrill & Garland (SC'16, CUB's
// DeviceSpmv), made deterministic. The work list is the rows' end offsets merged with the entries
// (rows + nnz items); block b takes the fixed items [b T K, (b + 1) T K) whatever the row lengths, so
// a 200k-entry row and a million 2-entry rows cost the same per item. Device code only.
//
// Unlike CUB, the rows inside a block are summed from the staged products row by row (CSR-stream), not by
// a per-thread pass over the merge path with a segmented scan of the carries: no search, no scan.
// Determinism: the plan fixes every block's start coordinate (row, entry); each row's part in a block is
// summed in an order fixed by the structure (see the kernel); a row crossing a block boundary leaves one
// partial per block, and whichever block writes the last of them (counted with an atomic) sums them all
// in block order: one launch per call, and the same bits whichever block arrives last.
#pragma once
#include <cstdint>

#include "reduce/cuda/block_reduce.cuh"
#include "reduce/cuda/warp_reduce.cuh"
#include "spmv_merge_plan.hpp"
#include "spmv_row_kernels.cuh"

namespace sparse::detail {

/// One merge block: stage its entries' products and its rows' ends in shared memory (coalesced loads,
/// merge_items independent gathers per thread), then sum every row it touches from there: rows of at most
/// merge_thread_row entries (inside this block) by one thread in storage order, longer ones by a warp
/// (lane strides, then reduce::warp::reduce_to_first), a block inside one row by block_reduce. Which way
/// a row goes depends only on the structure, so the result is deterministic even though warps pick long
/// rows from a list filled with a shared-memory atomic (the list's order does not enter any sum).
template <class Value, class Index>
__global__ void __launch_bounds__(merge_threads)
spmv_merge_kernel(csr_view<Value, Index> a, Value alpha, const Value* __restrict__ x, Value beta,
                  Value* __restrict__ y, const spmv_merge_block* __restrict__ blocks, Value* partials,
                  const spmv_split_row* __restrict__ split_rows, int* arrivals) {
  constexpr int tile = merge_threads * merge_items;
  constexpr int ws = reduce::warp::warp_size;
  using block_reduce = reduce::block::block_reduce<merge_threads, Value>;
  __shared__ Value prod[tile];       // a_ij x_j of the block's entries
  __shared__ int row_end[tile + 1];  // end offsets of the block's rows, relative to its first entry
  __shared__ int long_rows[tile];    // rows longer than merge_thread_row, for the warps
  __shared__ int n_long;
  __shared__ typename block_reduce::storage tmp;

  const int tid = static_cast<int>(threadIdx.x);
  const spmv_merge_block b = blocks[blockIdx.x], next = blocks[blockIdx.x + 1];
  const int rows_done = static_cast<int>(next.row - b.row);  // rows that end in this block
  const int entries = static_cast<int>(next.nz - b.nz);
  if (tid == 0) n_long = 0;
#pragma unroll
  for (int k = 0; k < merge_items; ++k) {
    const int q = tid + k * merge_threads;
    if (q < entries) prod[q] = product(a, x, b.nz + q);
  }
  if (rows_done == 0) {  // uniform: the block lies inside one row
    Value s = Value(0);
    for (int q = tid; q < entries; q += merge_threads) s += prod[q];
    s = block_reduce::reduce(s, reduce::plus{}, tmp);
    if (tid == 0) finish_split(b.first_split, b.first_slot, s, split_rows, arrivals, partials, alpha, beta, y);
    return;
  }
  // Rows 0 .. rows_done - 1 end here; row rows_done is open at the block's end (ends at `entries`) and
  // written only when it has entries here (last_slot >= 0). Row r spans [row_end[r - 1], row_end[r]),
  // row 0 from 0: the block starts inside or at the start of its first row.
  const int outputs = rows_done + (b.last_slot >= 0 ? 1 : 0);
  for (int r = tid; r < rows_done; r += merge_threads)
    row_end[r] = static_cast<int>(static_cast<std::int64_t>(a.row_ptr[b.row + r + 1]) - b.nz);
  if (tid == 0) row_end[rows_done] = entries;
  __syncthreads();

  auto finish = [&](int r, Value s) {
    if (r == 0 && b.first_slot >= 0)  // began in an earlier block
      finish_split(b.first_split, b.first_slot, s, split_rows, arrivals, partials, alpha, beta, y);
    else if (r == rows_done)  // goes on in the next block
      finish_split(b.last_split, b.last_slot, s, split_rows, arrivals, partials, alpha, beta, y);
    else
      store_row(y, b.row + r, s, alpha, beta);
  };
  for (int r = tid; r < outputs; r += merge_threads) {
    const int begin = r == 0 ? 0 : row_end[r - 1], end = row_end[r];
    if (end - begin <= merge_thread_row) {
      Value s = Value(0);
      for (int q = begin; q < end; ++q) s += prod[q];
      finish(r, s);
    } else {
      long_rows[atomicAdd(&n_long, 1)] = r;
    }
  }
  __syncthreads();
  const int lane = tid % ws, w = tid / ws;
  for (int k = w; k < n_long; k += merge_threads / ws) {  // uniform per warp
    const int r = long_rows[k];
    const int begin = r == 0 ? 0 : row_end[r - 1], end = row_end[r];
    Value s = Value(0);
    for (int q = begin + lane; q < end; q += ws) s += prod[q];
    s = reduce::warp::reduce_to_first(s, reduce::plus{});
    if (lane == 0) finish(r, s);
  }
}

}  // namespace sparse::detail
