// The stencil algorithm's analysis: a matrix whose rows repeat a few column-offset patterns (structured-grid
// stencils: a 5-point 2D Laplacian has 9, one interior and eight for the edges and corners) stores, per
// row, one byte naming its pattern instead of 4 bytes of col_idx per entry; a row's columns are
// row + offsets[pattern]. The values are still read from the CSR matrix; where rows hold at most 8 entries
// row_ptr is not (packed row starts, below). Host-only header (no
// CUDA syntax): shared by the plan (spmv_stencil_plan.cpp), the kernel (spmv_row_kernels.cuh) and the
// dispatch (spmv.cu).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpukit/device_buffer.hpp"
#include "sparse/spmv.hpp"

namespace sparse::detail {

constexpr int stencil_max_row = 32;        ///< entries per row (a thread per row, as scalar)
constexpr int stencil_max_patterns = 256;  ///< pattern ids fit a byte
constexpr int stencil_table_words = 1024;  ///< begin[patterns + 1] + every offset: 4 KB of shared memory per block
/// Rows of at most this many entries: the kernel's unrolled form (spmv.hpp documents it for the byte counts).
constexpr int stencil_unrolled_row = static_cast<int>(stencil_packed_max_row);
constexpr int stencil_block_threads = 256; ///< the kernel's block (spmv_dots's block reduction is compiled for it)
constexpr int stencil_row_group = 32;      ///< rows per packed-start group: a warp's rows (grid strides are multiples)

/// Packed row starts: a row's start as a byte beside its pattern byte, counted from the start of its group
/// of stencil_row_group rows (row_ptr[32 g], one per group). A row then reads 2 bytes where the pattern
/// byte and row_ptr cost 5, and needs no scan. With rows of at most stencil_unrolled_row entries a start
/// is at most 31 x 8 = 248 entries into its group, so every such matrix packs; the unrolled kernel reads
/// these, the loop form (rows of 9-32 entries) row_ptr. H200, 2026-12-03: laplace2d -0.5 to 3 %,
/// laplace3d 2-7 % faster (bench/experiments/spmv_variants.cu, three runs).
struct stencil_row_starts {
  std::vector<std::uint16_t> packed_row;  ///< per row: pattern id | (row_ptr[i] - row_ptr[32 g]) << 8
  std::vector<std::int64_t> group_start;  ///< row_ptr[32 g] for each group g, ceil(rows / 32) entries
};

/// The packed starts of a matrix whose rows' patterns are `pattern_of_row`; false where a row starts more
/// than 255 entries after its group (possible only with rows of more than 8 entries).
template <class Index>
bool pack_stencil_row_starts(std::int64_t rows, const Index* row_ptr, const std::vector<std::uint8_t>& pattern_of_row,
                             stencil_row_starts& out);

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

/// What a stencil plan keeps on the device: the table's words and, per row, its pattern byte (the loop
/// form, rows of 9-32 entries, with row_ptr) or its packed start (the unrolled form, rows of <= 8).
struct stencil_state {
  std::int32_t patterns = 0;
  bool unrolled = false;  ///< every row has at most stencil_unrolled_row entries: the unrolled kernel, packed starts
  bool plain_through_scalar = false;  ///< spmv (not spmv_dots) launches scalar's kernel: the same bits
  gpukit::device_buffer<std::uint8_t> pattern_of_row;  ///< the loop form's (empty when unrolled)
  gpukit::device_buffer<std::uint16_t> packed_row;     ///< the unrolled form's stencil_row_starts
  gpukit::device_buffer<std::int64_t> group_start;
  gpukit::device_buffer<std::int32_t> table;  ///< stencil_table::words (its size: the word count)

  stencil_state() = default;
  /// `starts`: pack_stencil_row_starts's result where max_row_length <= stencil_unrolled_row (ignored else).
  stencil_state(const stencil_table& t, std::int64_t max_row_length, const stencil_row_starts& starts)
      : patterns(t.patterns), unrolled(max_row_length <= stencil_unrolled_row),
        pattern_of_row(unrolled ? std::vector<std::uint8_t>{} : t.pattern_of_row),
        packed_row(unrolled ? starts.packed_row : std::vector<std::uint16_t>{}),
        group_start(unrolled ? starts.group_start : std::vector<std::int64_t>{}), table(t.words) {}
};

/// describe()'s details, e.g. " (9 row patterns, 33 offsets, 8 loads in flight, packed row starts)".
std::string details_of(const stencil_state& s);

}  // namespace sparse::detail
