// The column_blocks layout (spmv_column_blocks_plan.hpp): when it applies, the host build and the upload.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gpukit/cuda_launch.hpp"
#include "instantiate.hpp"
#include "spmv_column_blocks_plan.hpp"

namespace sparse::detail {

std::string column_blocks_why_not(std::int64_t rows, std::int64_t cols, std::int64_t nnz, std::size_t value_bytes,
                                  int blocks, std::int64_t shared_bytes) {
  if (blocks < 1) return "no column blocks (" + std::to_string(blocks) + ")";
  const std::int64_t width = (cols + blocks - 1) / blocks;
  if (width > column_blocks_max_width)
    return std::to_string(cols) + " columns in " + std::to_string(blocks) + " blocks of " + std::to_string(width) +
           " (at most " + std::to_string(column_blocks_max_width) + ": a column is a 16-bit offset in its block)";
  if (static_cast<double>(width) * static_cast<double>(value_bytes) > static_cast<double>(shared_bytes))
    return "a block's " + std::to_string(width) + " values of x take " + std::to_string(width * static_cast<std::int64_t>(value_bytes)) +
           " bytes of shared memory (at most " + std::to_string(shared_bytes) + " on this device)";
  const double workspace = static_cast<double>(blocks) * static_cast<double>(rows + 1) * (4.0 + static_cast<double>(value_bytes));
  if (workspace > column_blocks_max_workspace_bytes)
    return std::to_string(rows) + " rows need " + std::to_string(static_cast<std::int64_t>(workspace / 1e6)) +
           " MB of row starts and partials in " + std::to_string(blocks) + " blocks (at most " +
           std::to_string(static_cast<std::int64_t>(column_blocks_max_workspace_bytes / 1e6)) + " MB)";
  if (nnz > std::numeric_limits<std::uint32_t>::max())
    return std::to_string(nnz) + " entries (a block's row starts are 32-bit)";
  return {};
}

template <class Index>
column_blocks_layout build_column_blocks_layout(std::int64_t rows, std::int64_t cols, const Index* row_ptr,
                                                const Index* col_idx, int blocks) {
  column_blocks_layout l;
  l.width = std::max<std::int64_t>(1, (cols + blocks - 1) / blocks);
  const auto nb = static_cast<std::size_t>(blocks);
  const auto stride = static_cast<std::size_t>(rows + 1);
  // Entries per block first (the bases), then each entry placed at its block's cursor: row by row, so a
  // row's entries stay in column order within each block and the rows follow each other.
  std::vector<std::int64_t> count(nb, 0);
  const std::int64_t nnz = rows > 0 ? static_cast<std::int64_t>(row_ptr[rows]) : 0;
  for (std::int64_t q = 0; q < nnz; ++q) ++count[static_cast<std::size_t>(col_idx[q] / l.width)];
  l.base.assign(nb + 1, 0);
  for (std::size_t p = 0; p < nb; ++p) l.base[p + 1] = l.base[p] + count[p];
  l.col.resize(static_cast<std::size_t>(nnz));
  l.source.resize(static_cast<std::size_t>(nnz));
  l.start.assign(nb * stride, 0);
  std::vector<std::int64_t> cursor(nb, 0);  // entries placed so far in each block
  for (std::int64_t r = 0; r < rows; ++r) {
    for (auto q = static_cast<std::int64_t>(row_ptr[r]); q < row_ptr[r + 1]; ++q) {
      const std::int64_t c = col_idx[q];
      const auto p = static_cast<std::size_t>(c / l.width);
      const auto at = static_cast<std::size_t>(l.base[p] + cursor[p]++);
      l.col[at] = static_cast<std::uint16_t>(c - static_cast<std::int64_t>(p) * l.width);
      l.source[at] = q;
    }
    for (std::size_t p = 0; p < nb; ++p) l.start[p * stride + static_cast<std::size_t>(r) + 1] = static_cast<std::uint32_t>(cursor[p]);
  }
  return l;
}

template <class Value, class Index>
std::optional<column_blocks_state<Value>> make_column_blocks_state(const csr_view<Value, Index>& a,
                                                                   const Index* host_row_ptr, int sm_count,
                                                                   std::string& why_not) {
  why_not = column_blocks_why_not(a.rows, a.cols, a.nnz, sizeof(Value), sm_count, gpukit::shared_bytes_per_block_optin());
  if (!why_not.empty()) return std::nullopt;
  std::vector<Index> cols(static_cast<std::size_t>(a.nnz));
  std::vector<Value> values(static_cast<std::size_t>(a.nnz));
  gpukit::copy_to_host(cols.data(), a.col_idx, cols.size() * sizeof(Index));
  gpukit::copy_to_host(values.data(), a.values, values.size() * sizeof(Value));
  const auto l = build_column_blocks_layout<Index>(a.rows, a.cols, host_row_ptr, cols.data(), sm_count);
  std::vector<Value> ordered(l.source.size());
  for (std::size_t i = 0; i < ordered.size(); ++i) ordered[i] = values[static_cast<std::size_t>(l.source[i])];
  column_blocks_state<Value> s;
  s.blocks = l.blocks();
  s.width = l.width;
  s.base = gpukit::device_buffer<std::int64_t>(l.base);
  s.start = gpukit::device_buffer<std::uint32_t>(l.start);
  s.col = gpukit::device_buffer<std::uint16_t>(l.col);
  s.values = gpukit::device_buffer<Value>(ordered);
  s.partials = gpukit::device_buffer<Value>(static_cast<std::int64_t>(s.blocks) * a.rows);
  return s;
}

template column_blocks_layout build_column_blocks_layout<std::int32_t>(std::int64_t, std::int64_t, const std::int32_t*,
                                                                       const std::int32_t*, int);
template column_blocks_layout build_column_blocks_layout<std::int64_t>(std::int64_t, std::int64_t, const std::int64_t*,
                                                                       const std::int64_t*, int);
#define SPARSE_COLUMN_BLOCKS_INSTANTIATE(V, I)                                                                   \
  template std::optional<column_blocks_state<V>> make_column_blocks_state<V, I>(const csr_view<V, I>&, const I*, \
                                                                                int, std::string&);
SPARSE_FOR_EACH_VALUE_INDEX(SPARSE_COLUMN_BLOCKS_INSTANTIATE)
#undef SPARSE_COLUMN_BLOCKS_INSTANTIATE

}  // namespace sparse::detail
