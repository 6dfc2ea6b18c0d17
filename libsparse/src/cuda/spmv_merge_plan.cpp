// The merge partition: fixed-size blocks of the merge path (rows' ends merged with the entries) and the
// rows that cross a block boundary (host side, once per plan), and its upload. No CUDA syntax: the kernel
// is spmv_merge.cuh.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "instantiate.hpp"
#include "spmv_merge_plan.hpp"

namespace sparse::detail {
namespace {

/// Merge-path search: blocks + 1 coordinates (rows ended, entries consumed) on the diagonals
/// 0, merge_tile, 2 merge_tile, ..., rows + nnz. A row's end comes before entry j when
/// row_ptr[row + 1] <= j (the same tie rule as the kernel's pass).
template <class Index>
std::vector<spmv_merge_block> merge_path_blocks(std::int64_t rows, const Index* row_ptr) {
  const std::int64_t nnz = rows > 0 ? static_cast<std::int64_t>(row_ptr[rows]) : 0;
  const std::int64_t items = rows + nnz;
  const std::int64_t nblocks = (items + merge_tile - 1) / merge_tile;
  std::vector<spmv_merge_block> blocks;
  for (std::int64_t b = 0; b <= nblocks; ++b) {
    const std::int64_t d = std::min(b * merge_tile, items);
    std::int64_t lo = std::max<std::int64_t>(0, d - nnz), hi = std::min(d, rows);
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (static_cast<std::int64_t>(row_ptr[mid + 1]) <= d - 1 - mid) lo = mid + 1;
      else hi = mid;
    }
    spmv_merge_block blk;
    blk.row = lo;
    blk.nz = d - lo;
    blocks.push_back(blk);
  }
  return blocks;
}

/// Gives a partial slot to `row`'s part in the next block; consecutive parts of one row share its entry.
std::int64_t add_slot(merge_partition& m, std::int64_t row) {
  const std::int64_t slot = m.partial_slots++;
  if (m.split_rows.empty() || m.split_rows.back().row != row) {
    spmv_split_row r;
    r.row = row;
    r.first_slot = slot;
    m.split_rows.push_back(r);
  }
  ++m.split_rows.back().chunks;
  return slot;
}

}  // namespace

template <class Index>
merge_partition build_merge_partition(std::int64_t rows, const Index* row_ptr) {
  merge_partition m;
  m.blocks = merge_path_blocks(rows, row_ptr);
  const auto last_split = [&] { return static_cast<std::int64_t>(m.split_rows.size()) - 1; };
  for (std::size_t b = 0; b + 1 < m.blocks.size(); ++b) {
    auto& blk = m.blocks[b];
    const auto& next = m.blocks[b + 1];
    // The first row crosses the block's start (began before it), or the block lies inside one row.
    if (blk.row == next.row || blk.nz > static_cast<std::int64_t>(row_ptr[blk.row])) {
      blk.first_slot = add_slot(m, blk.row);
      blk.first_split = last_split();
    }
    // The last row is open at the block's end with entries in this block.
    if (next.row > blk.row && next.row < rows && next.nz > static_cast<std::int64_t>(row_ptr[next.row])) {
      blk.last_slot = add_slot(m, next.row);
      blk.last_split = last_split();
    }
  }
  return m;
}

template <class Value, class Index>
merge_state<Value> make_merge_state(std::int64_t rows, const Index* row_ptr) {
  merge_state<Value> s;
  s.partition = build_merge_partition(rows, row_ptr);
  const auto& m = s.partition;
  if (m.blocks.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw std::invalid_argument("spmv plan: " + std::to_string(m.blocks.size()) +
                                " merge blocks exceed the grid limit of 2^31 - 1 blocks");
  s.blocks = gpukit::device_buffer<spmv_merge_block>(m.blocks);
  s.split = split_row_workspace<Value>(m.split_rows, m.partial_slots);
  return s;
}

std::string details_of(const merge_partition& m) {
  return " (" + std::to_string(m.blocks.size() - 1) + " blocks of " + std::to_string(merge_tile) + " items, " +
         std::to_string(m.split_rows.size()) + " rows cross a block boundary)";
}

template merge_partition build_merge_partition<std::int32_t>(std::int64_t, const std::int32_t*);
template merge_partition build_merge_partition<std::int64_t>(std::int64_t, const std::int64_t*);
#define SPARSE_MERGE_INSTANTIATE(V, I) template merge_state<V> make_merge_state<V, I>(std::int64_t, const I*);
SPARSE_FOR_EACH_VALUE_INDEX(SPARSE_MERGE_INSTANTIATE)
#undef SPARSE_MERGE_INSTANTIATE

}  // namespace sparse::detail
