// The merge algorithm's analysis: every block's start on the merge path and the rows that cross a block
// boundary (host side, once per matrix), and what a plan keeps of it on the device. Host-only header (no
// CUDA syntax): shared by the plan (spmv_merge_plan.cpp), the kernel (spmv_merge.cuh) and the dispatch.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpukit/device_buffer.hpp"
#include "spmv_split_rows.hpp"

namespace sparse::detail {

// The merge kernel (spmv_merge.cuh): 256 threads x 7 items (rows' ends and entries) per block: 7
// independent gathers per thread in the staging loop; 1,792 items stage 7 KB of products, 7 KB of row
// ends and 7 KB of long-row ids (float), 8 blocks per SM. Rows of up to 12 entries in a block are summed
// by one thread (the Laplacians' 5-7 and power-law's typical 1-10), longer ones by a warp.
constexpr int merge_threads = 256;
constexpr int merge_items = 7;
constexpr int merge_thread_row = 12;
constexpr std::int64_t merge_tile = std::int64_t{merge_threads} * merge_items;

/// Where a merge block starts on the merge path: `row` row ends and `nz` entries precede it. A block whose
/// first row began in an earlier block (or that lies inside one row) writes that row's part to
/// partials[first_slot]; one whose last row goes on into the next block writes it to partials[last_slot].
struct spmv_merge_block {
  std::int64_t row = 0;
  std::int64_t nz = 0;
  std::int64_t first_slot = -1;
  std::int64_t last_slot = -1;
  std::int64_t first_split = -1;  ///< index of that row in merge_partition::split_rows
  std::int64_t last_split = -1;
};

/// The host-side merge partition: blocks + 1 coordinates (the last is (rows, nnz)) and the rows that cross
/// a block boundary, whose partials (consecutive slots, in block order) finish_split sums.
struct merge_partition {
  std::vector<spmv_merge_block> blocks;
  std::vector<spmv_split_row> split_rows;
  std::int64_t partial_slots = 0;
};

template <class Index>
merge_partition build_merge_partition(std::int64_t rows, const Index* row_ptr);

/// What a merge plan keeps: the partition (host copy: describe() and the grid size) and its upload.
template <class Value>
struct merge_state {
  merge_partition partition;
  gpukit::device_buffer<spmv_merge_block> blocks;
  split_row_workspace<Value> split;
};

/// Builds the partition of `rows` rows (host row_ptr) and uploads it. Throws std::invalid_argument when
/// the blocks exceed the grid limit of 2^31 - 1.
template <class Value, class Index>
merge_state<Value> make_merge_state(std::int64_t rows, const Index* row_ptr);

/// describe()'s details, e.g. " (4688 blocks of 1792 items, 9 rows cross a block boundary)".
std::string details_of(const merge_partition& m);
template <class Value>
std::string details_of(const merge_state<Value>& s) {
  return details_of(s.partition);
}

}  // namespace sparse::detail
