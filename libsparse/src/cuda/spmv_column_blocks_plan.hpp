// The column_blocks algorithm's analysis: a copy of the matrix cut into one range of columns per SM, for
// few long rows over a large x (spmv_column_blocks.cuh says why it is faster), and what a plan keeps of it
// on the device. Host-only header (no CUDA syntax): shared by the plan (spmv_column_blocks_plan.cpp), the
// kernels (spmv_column_blocks.cuh) and the dispatch (spmv.cu).
//
// The layout: the columns are cut into `blocks` ranges of `width` = ceil(cols / blocks) columns (the last
// may hold fewer); block p holds every entry whose column lies in [p width, (p + 1) width), row after row
// in each row's column order, as a CSR of all the rows: its row starts (rows + 1, relative to the block's
// first entry, 32-bit), its columns as 16-bit offsets from p width, its values. A block's thread block
// sums each row's entries of the block into one partial; a row's result is its partials added in block
// order. Both orders are fixed, so the result is deterministic (a k-term sum in another order than
// scalar's, inside the error bound of sparse/spmv.hpp).
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "gpukit/device_buffer.hpp"
#include "sparse/csr_view.hpp"

namespace sparse::detail {

constexpr int column_blocks_threads = 1024;           ///< one block per SM: a thread per row, 20 rows each for 20k rows
constexpr std::int64_t column_blocks_max_width = 65536;  ///< columns of a block: a 16-bit offset
/// The row starts and partials a layout may keep (blocks x (rows + 1) x (4 + sizeof(Value)) bytes): a
/// matrix with more rows than that covers is not one of few long rows.
constexpr double column_blocks_max_workspace_bytes = double(std::int64_t{1} << 30);

/// Why column_blocks cannot take a rows x cols matrix of nnz entries with values of `value_bytes` bytes
/// cut into `blocks` column ranges on a device whose block may use `shared_bytes` of shared memory; empty
/// where it can. (The width must fit 16 bits and the block's x slice its shared memory.)
std::string column_blocks_why_not(std::int64_t rows, std::int64_t cols, std::int64_t nnz, std::size_t value_bytes,
                                  int blocks, std::int64_t shared_bytes);

/// The column-block copy of a host CSR structure (row_ptr[0] = 0) in `blocks` ranges of columns.
struct column_blocks_layout {
  std::int64_t width = 0;                 ///< columns per block
  std::vector<std::int64_t> base;         ///< blocks + 1: each block's first entry in col / source
  std::vector<std::uint32_t> start;       ///< blocks x (rows + 1): row r of block p starts at base[p] + start[p (rows + 1) + r]
  std::vector<std::uint16_t> col;         ///< column - p width
  std::vector<std::int64_t> source;       ///< each entry's position in col_idx / values
  int blocks() const noexcept { return base.empty() ? 0 : static_cast<int>(base.size()) - 1; }
};

/// Builds the layout (the caller has checked column_blocks_why_not).
template <class Index>
column_blocks_layout build_column_blocks_layout(std::int64_t rows, std::int64_t cols, const Index* row_ptr,
                                                const Index* col_idx, int blocks);

/// What a column_blocks plan keeps: the layout on the device, its values in the layout's order, and the
/// partials (blocks x rows values, written and read by every call; the rows are the plan's matrix's).
template <class Value>
struct column_blocks_state {
  int blocks = 0;
  std::int64_t width = 0;
  gpukit::device_buffer<std::int64_t> base;
  gpukit::device_buffer<std::uint32_t> start;
  gpukit::device_buffer<std::uint16_t> col;
  gpukit::device_buffer<Value> values;
  mutable gpukit::device_buffer<Value> partials;
};

/// Reads col_idx and the values of the device matrix `a` back, builds its layout in one column block per
/// SM (`sm_count`) and uploads it; std::nullopt, with the reason in `why_not`, where column_blocks does
/// not apply.
template <class Value, class Index>
std::optional<column_blocks_state<Value>> make_column_blocks_state(const csr_view<Value, Index>& a,
                                                                   const Index* host_row_ptr, int sm_count,
                                                                   std::string& why_not);

/// describe()'s details, e.g. " (132 blocks of 15152 columns, x in shared memory)".
template <class Value>
std::string details_of(const column_blocks_state<Value>& s) {
  return " (" + std::to_string(s.blocks) + " blocks of " + std::to_string(s.width) + " columns, x in shared memory)";
}

}  // namespace sparse::detail
