// Rows that several blocks sum in parts (merge: rows crossing a block boundary; adaptive: rows longer
// than a block's 8,192 entries), and the device workspace in which the parts meet. Host-only header (no
// CUDA syntax): shared by the plan builders and the kernels (finish_split in spmv_row_kernels.cuh).
#pragma once
#include <cstdint>
#include <vector>

#include "gpukit/device_buffer.hpp"

namespace sparse::detail {

/// A row split across several blocks: its parts are slots [first_slot, first_slot + chunks), summed in
/// slot order (a fixed order, so the result is deterministic) by the block that writes the last of them.
struct spmv_split_row {
  std::int64_t row = 0;
  std::int64_t first_slot = 0;
  std::int64_t chunks = 0;
};

/// The split rows of a plan on the device, and the scratch every call writes: one partial per slot, and
/// per split row the count of parts written so far (0 between calls: the block that finishes a row
/// resets it). The scratch is what a call writes, not what the plan means, so it is `mutable`: spmv()
/// takes the plan const. Two calls of one plan therefore must not run at the same time (one stream, or
/// streams ordered by events).
template <class Value>
struct split_row_workspace {
  gpukit::device_buffer<spmv_split_row> rows;
  mutable gpukit::device_buffer<Value> partials;
  mutable gpukit::device_buffer<int> arrivals;

  split_row_workspace() = default;
  split_row_workspace(const std::vector<spmv_split_row>& split_rows, std::int64_t slots)
      : rows(split_rows), partials(slots), arrivals(static_cast<std::int64_t>(split_rows.size())) {
    if (!split_rows.empty()) arrivals.fill_bytes(0);
  }
};

}  // namespace sparse::detail
