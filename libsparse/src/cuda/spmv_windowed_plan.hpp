// The windowed algorithm's analysis: a copy of the matrix that the plan orders by column window, for rows
// of random columns whose x fits in L2 (spmv_windowed.cuh says why it is faster), and what a plan keeps of
// it on the device. Host-only header (no CUDA syntax): shared by the plan (spmv_windowed_plan.cpp), the
// kernel (spmv_windowed.cuh) and the dispatch (spmv.cu).
//
// The layout: a row of L entries is summed in S = ceil(L / windowed_slot_entries) slots (at least one):
// slot j takes the row's entries j, j + S, j + 2S, ... (in column order), so a row's entries in one window
// fall in different slots. The rows are cut into ranges, one per warp (whole rows, at most
// windowed_max_warp_slots slots, about equal entries + rows each); a warp's entries are stored sorted by
// (column / window_columns, row, column), then cut into groups of 32 in which no slot appears twice (an
// entry that would repeat a slot waits for a later group, behind any earlier entry of its slot, so every
// slot keeps its column order); a group the list cannot fill is padded. An entry is one 32-bit word,
// (slot - the warp's first slot) << 22 | column, and its value. A row's sum is its slots' sums added in
// slot order; a row of at most 32 entries has one slot, summed exactly as scalar sums it.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpukit/device_buffer.hpp"
#include "sparse/csr_view.hpp"

namespace sparse::detail {

constexpr int windowed_threads = 512;            ///< 16 warps per block, 2 blocks per SM
constexpr int windowed_warps_per_block = windowed_threads / 32;
constexpr int windowed_unroll = 8;               ///< groups of 32 entries in flight per warp step
constexpr int windowed_column_bits = 22;
constexpr std::uint32_t windowed_column_mask = (1u << windowed_column_bits) - 1;
constexpr std::int64_t windowed_max_cols = std::int64_t{1} << windowed_column_bits;
constexpr int windowed_max_warp_slots = 1023;    ///< slot 1023 with column 2^22 - 1 would be the pad word
constexpr int windowed_slot_entries = 32;        ///< entries per slot (at most): a row of <= 32 has one slot
constexpr int windowed_max_row_slots = 64;       ///< so rows of at most 2,048 entries
constexpr std::uint32_t windowed_pad = 0xFFFFFFFFu;  ///< an entry that adds nothing
constexpr int windowed_window_bytes = 16384;     ///< of x: 4,096 floats or 2,048 doubles
constexpr std::size_t windowed_max_waiting = 1024;  ///< entries held back at once (bounds the build's work)
constexpr int windowed_max_shared_bytes = 96 << 10;  ///< a block's slot sums (the kernel's opt-in limit)

/// The window-ordered copy of a matrix, or why it cannot be built.
struct windowed_layout {
  std::vector<std::uint32_t> packed;     ///< the entries, warp after warp; windowed_pad for padding
  std::vector<std::int64_t> source;      ///< each entry's position in col_idx / values (-1: padding)
  std::vector<std::int64_t> warp_begin;  ///< warps + 1 offsets into packed (multiples of 32)
  std::vector<std::int64_t> warp_row0;   ///< warps + 1: each warp's first row, then rows
  std::vector<std::int64_t> warp_slot0;  ///< warps + 1: each warp's first slot, then the slot count
  std::vector<std::int64_t> row_slot;    ///< rows + 1: each row's first slot; empty when every row has one
  std::int64_t padding = 0;              ///< pad entries (packed.size() - nnz)
  std::int32_t max_block_slots = 0;      ///< slots of the largest block (its shared-memory sums)
  std::int32_t window_columns = 0;
  std::string why_not;                   ///< empty when the layout was built
  bool usable() const noexcept { return why_not.empty(); }
  std::int64_t warps() const noexcept { return warp_begin.empty() ? 0 : static_cast<std::int64_t>(warp_begin.size()) - 1; }
};

/// Builds the windowed layout of a host CSR structure (row_ptr[0] = 0): rows cut into ranges for about
/// `target_warps` warps (more where a warp would exceed `max_warp_slots` slots), windows of
/// `window_columns` columns (a power of two). Refuses (why_not) more than windowed_max_cols columns and
/// rows of more than windowed_slot_entries x windowed_max_row_slots entries.
template <class Index>
windowed_layout build_windowed_layout(std::int64_t rows, std::int64_t cols, const Index* row_ptr, const Index* col_idx,
                                      std::int64_t target_warps, int window_columns,
                                      int max_warp_slots = windowed_max_warp_slots);

/// What a windowed plan keeps: the layout on the device, with its values in the layout's order.
template <class Value>
struct windowed_state {
  std::int64_t warps = 0;          ///< of the layout: a block per windowed_warps_per_block of them
  std::int32_t block_slots = 0;    ///< slot sums of the largest block: its dynamic shared memory
  std::int32_t shared_per_sm = 0;  ///< the device's shared memory per SM, bytes (the L1/shared carveout)
  std::int32_t window_columns = 0;
  std::int64_t padding = 0;
  std::int32_t max_row_slots = 1;  ///< slots of the longest row
  gpukit::device_buffer<std::uint32_t> packed;
  gpukit::device_buffer<Value> values;
  gpukit::device_buffer<std::int64_t> warp_begin;
  gpukit::device_buffer<std::int64_t> warp_row0;
  gpukit::device_buffer<std::int64_t> warp_slot0;
  gpukit::device_buffer<std::int64_t> row_slot;  ///< empty: one slot per row
};

/// Reads col_idx and the values of the device matrix `a` back (whole), builds its layout for `sm_count`
/// SMs and uploads it; std::nullopt, with the reason in `why_not`, where the layout cannot be built.
template <class Value, class Index>
std::optional<windowed_state<Value>> make_windowed_state(const csr_view<Value, Index>& a, const Index* host_row_ptr,
                                                         int sm_count, std::string& why_not);

/// describe()'s details, e.g. " (264 warps, windows of 4096 columns, 1184 pad entries)".
template <class Value>
std::string details_of(const windowed_state<Value>& s) {
  return " (" + std::to_string(s.warps) + " warps, windows of " + std::to_string(s.window_columns) + " columns, " +
         std::to_string(s.padding) + " pad entries" +
         (s.max_row_slots > 1 ? ", up to " + std::to_string(s.max_row_slots) + " slots per row" : "") + ")";
}

}  // namespace sparse::detail
