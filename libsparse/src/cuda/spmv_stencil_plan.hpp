// The stencil algorithm's analysis: a matrix whose rows repeat a few column-offset patterns (structured-grid
// stencils: a 5-point 2D Laplacian has 9, one interior and eight for the edges and corners) stores, per
// row, one byte naming its pattern instead of 4 bytes of col_idx per entry; a row's columns are
// row + offsets[pattern]. The values and row_ptr are still read from the CSR matrix. Host-only header (no
// CUDA syntax): shared by the plan (spmv_stencil_plan.cpp), the kernel (spmv_row_kernels.cuh) and the
// dispatch (spmv.cu).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpukit/device_buffer.hpp"

namespace sparse::detail {

constexpr int stencil_max_row = 32;        ///< entries per row (a thread per row, as scalar)
constexpr int stencil_max_patterns = 256;  ///< pattern ids fit a byte
constexpr int stencil_table_words = 1024;  ///< begin[patterns + 1] + every offset: 4 KB of shared memory per block
constexpr int stencil_unrolled_row = 8;    ///< rows of at most this many entries: the kernel's unrolled form
constexpr int stencil_block_threads = 256; ///< the kernel's block (spmv_dots's block reduction is compiled for it)

/// The pattern table of a matrix, or why it does not qualify.
struct stencil_table {
  std::vector<std::uint8_t> pattern_of_row;  ///< rows entries
  std::int32_t patterns = 0;
  /// words[0..patterns]: where each pattern's offsets start in words[patterns + 1 ..] (relative to that
  /// point; words[patterns] = the offset count), then the offsets (column - row) of every pattern.
  std::vector<std::int32_t> words;
  std::string why_not;  ///< empty when the matrix qualifies
  bool usable() const noexcept { return why_not.empty(); }
};

/// Copies col_idx[first, first + count) into dst (host memory).
template <class Index>
using fetch_columns = std::function<void(std::int64_t first, std::int64_t count, Index* dst)>;

/// Builds the stencil table from row_ptr (host) and the column indices, fetched in pieces of about
/// `chunk_entries` entries at row boundaries, so a matrix that does not qualify (257 distinct
/// patterns among its first rows, say) costs one piece, not a copy of all of col_idx.
template <class Index>
stencil_table build_stencil_table(std::int64_t rows, const Index* row_ptr, const fetch_columns<Index>& fetch,
                                  std::int64_t chunk_entries = std::int64_t{1} << 20);

/// What a stencil plan keeps on the device: every row's pattern byte and the table's words.
struct stencil_state {
  std::int32_t patterns = 0;
  bool unrolled = false;  ///< every row has at most stencil_unrolled_row entries: the unrolled kernel
  bool plain_through_scalar = false;  ///< spmv (not spmv_dots) launches scalar's kernel: the same bits
  gpukit::device_buffer<std::uint8_t> pattern_of_row;
  gpukit::device_buffer<std::int32_t> table;  ///< stencil_table::words (its size: the word count)

  stencil_state() = default;
  stencil_state(const stencil_table& t, std::int64_t max_row_length)
      : patterns(t.patterns), unrolled(max_row_length <= stencil_unrolled_row), pattern_of_row(t.pattern_of_row),
        table(t.words) {}
};

/// describe()'s details, e.g. " (9 row patterns, 33 offsets, 8 loads in flight)".
std::string details_of(const stencil_state& s);

}  // namespace sparse::detail
