// What an spmv_plan holds on the device, and the tile list of the adaptive algorithm. Host-only header
// (no CUDA syntax): shared by the plan builder (spmv_plan.cpp) and the dispatch (spmv.cu).
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gpukit/device_buffer.hpp"

namespace sparse::detail {

/// The adaptive kernel runs one 256-thread block per tile; each tile is one of these kinds.
enum tile_kind : std::int32_t {
  tile_stream = 0,  ///< up to 8 runs of consecutive short rows: entries staged in shared memory, a thread per row
  tile_warp = 1,    ///< up to 8 medium rows (ids in the row bin), one warp per row
  tile_block = 2,   ///< one long row, the whole block with reduce::block::block_reduce
  tile_split = 3,   ///< one chunk of a very long row: block-reduced to a partial; the last chunk sums them
};

/// One tile (48 bytes; a 20M-entry Laplacian has ~10k of them, 0.5 MB read once per call).
struct spmv_tile {
  std::int64_t first = 0;  ///< stream: first segment; warp: offset in the row bin; block/split: the row
  std::int64_t begin = 0;  ///< split: first entry (offset into col_idx/values) of the chunk
  std::int64_t slot = 0;   ///< split: index of this chunk's partial
  std::int32_t count = 0;  ///< stream: segments; warp: rows; split: entries in the chunk
  std::int32_t kind = tile_stream;
  std::int32_t rows = 0;     ///< stream: rows in all segments
  std::int32_t entries = 0;  ///< stream: entries in all segments
  std::int32_t lanes = 1;    ///< stream: lanes summing each row from shared memory (stream_lanes)
  std::int32_t split = 0;    ///< split: index of the row in the split-row list
};

/// A run of consecutive short rows inside a stream tile. Long rows between two runs (a power-law matrix
/// has one every ~55 rows) start a new segment instead of closing the tile, so tiles stay full.
struct spmv_segment {
  std::int64_t first_row = 0;
  std::int64_t p0 = 0;     ///< row_ptr[first_row]
  std::int32_t q0 = 0;     ///< offset of the segment's first entry in the tile's staged products
  std::int32_t r0 = 0;     ///< offset of the segment's first row among the tile's rows
};

/// A row split across several blocks: its chunks' partials are slots [first_slot, first_slot + chunks),
/// summed in slot order (a fixed order, so the result is deterministic) by the block that writes the
/// last of them (finish_split in spmv_row_kernels.cuh).
struct spmv_split_row {
  std::int64_t row = 0;
  std::int64_t first_slot = 0;
  std::int64_t chunks = 0;
};

// Adaptive binning thresholds (entries per row). The numbers follow from the 256-thread block:
constexpr int tile_threads = 256;
constexpr int stream_max_row = 32;           ///< rows up to a warp's width are "short": several per warp
constexpr int stream_tile_entries = 2048;    ///< 8 entries per thread staged in shared memory
constexpr int stream_tile_rows = 1024;       ///< at most 4 rows per thread in the reduce phase
constexpr int stream_tile_segments = 8;      ///< runs of short rows per stream tile (a linear search)
constexpr int warp_max_row = 1024;           ///< a warp per row up to 32 entries per lane
constexpr int warps_per_tile = tile_threads / 32;
constexpr std::int64_t block_max_row = 8192; ///< a block per row up to 32 entries per thread
constexpr std::int64_t split_chunk = 8192;   ///< longer rows: chunks of 32 entries per thread, one block each

/// Lanes per row in a stream tile's reduce phase, from its mean row length. One thread per row reads
/// staged[row start + q]: rows of length m put a warp's 32 reads m words apart, a gcd(m, 32)-way bank
/// conflict (16-way for 16-entry rows). Up to 8 entries per row that is cheap (<= 8 reads); longer rows
/// (a stream row has at most 32 entries) get 16 or 32 lanes, the smallest power of two >= the mean, which
/// read consecutive words (conflict-free) and finish with reduce::warp::all_reduce. Returns 1, 16 or 32.
inline std::int32_t stream_lanes(std::int64_t entries, std::int64_t rows) {
  if (rows == 0 || entries <= 8 * rows) return 1;
  return entries > 16 * rows ? 32 : 16;
}

/// The host-side partition (built once at plan time; tests check it covers every row exactly once).
struct adaptive_partition {
  std::vector<spmv_tile> tiles;
  std::vector<spmv_segment> segments;   ///< of the stream tiles
  std::vector<std::int64_t> warp_rows;  ///< the row bin of medium rows (see warp_row_order)
  std::vector<spmv_split_row> split_rows;
  std::int64_t partial_slots = 0;
  std::int64_t counts[4] = {0, 0, 0, 0};  ///< tiles per kind
};

/// How the medium rows are grouped into warp tiles: in row order, or longest first (ties in row order),
/// so that a tile's 8 rows have similar lengths and its warps finish together. On an H200, powerlaw's
/// adaptive kernel: 57.4-57.9 us longest first against 59.1-59.3 in row order (cuSPARSE ALG1 58.7;
/// bench/experiments/spmv_variants.cu). The library uses longest_first.
enum class warp_row_order { by_row, longest_first };

template <class Index>
adaptive_partition build_adaptive_partition(std::int64_t rows, const Index* row_ptr,
                                            warp_row_order order = warp_row_order::longest_first);

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

// The stencil algorithm: a matrix whose rows repeat a few column-offset patterns (structured-grid
// stencils: a 5-point 2D Laplacian has 9, one interior and eight for the edges and corners) stores, per
// row, one byte naming its pattern instead of 4 bytes of col_idx per entry; a row's columns are
// row + offsets[pattern]. The values and row_ptr are still read from the CSR matrix.
constexpr int stencil_max_row = 32;        ///< entries per row (a thread per row, as scalar)
constexpr int stencil_max_patterns = 256;  ///< pattern ids fit a byte
constexpr int stencil_table_words = 1024;  ///< begin[patterns + 1] + every offset: 4 KB of shared memory per block

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

// The windowed algorithm: a copy of the matrix that the plan orders by column window, for rows of random
// columns whose x fits in L2 (spmv_windowed.cuh says why it is faster). A row of L entries is summed in
// S = ceil(L / windowed_slot_entries) slots (at least one): slot j takes the row's entries j, j + S,
// j + 2S, ... (in column order), so a row's entries in one window fall in different slots. The rows are
// cut into ranges, one per warp (whole rows, at most windowed_max_warp_slots slots, about equal entries
// + rows each); a warp's entries are stored sorted by (column / window_columns, row, column), then cut
// into groups of 32 in which no slot appears twice (an entry that would repeat a slot waits for a later
// group, behind any earlier entry of its slot, so every slot keeps its column order); a group the list
// cannot fill is padded. An entry is one 32-bit word, (slot - the warp's first slot) << 22 | column, and
// its value. A row's sum is its slots' sums added in slot order; a row of at most 32 entries has one slot,
// summed exactly as scalar sums it.
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

/// Device-side state of a plan.
struct spmv_plan_state {
  int sm_count = 0;
  bool vector_chunked = false;   // vector: lanes read 4-entry chunks (rows of >= 8 x width entries)
  bool vector_streaming = false; // vector (not chunked): evict-first entry loads (x larger than 16 MiB)
  adaptive_partition partition;  // host copy (sizes, for describe() and launches)
  merge_partition merge;         // host copy for the merge algorithm
  gpukit::device_buffer<spmv_merge_block> merge_blocks;
  gpukit::device_buffer<int> split_arrivals;  // merge, adaptive: chunks of each split row written so far (0 between calls)
  gpukit::device_buffer<spmv_tile> tiles;
  gpukit::device_buffer<spmv_segment> segments;
  gpukit::device_buffer<std::int64_t> warp_rows;
  gpukit::device_buffer<spmv_split_row> split_rows;
  gpukit::device_buffer<double> partials;  // sized in bytes for double; float plans use the first half
  std::int32_t stencil_patterns = 0;                  // stencil: the table's pattern count
  bool stencil_unrolled = false;                      //   every row <= 8 entries: the unrolled kernel
  gpukit::device_buffer<std::uint8_t> stencil_rows;   //   the pattern of every row
  gpukit::device_buffer<std::int32_t> stencil_table;  //   stencil_table::words (its size: the word count)
  std::int64_t windowed_warps = 0;                    // windowed: warps of the layout
  std::int32_t shared_per_sm = 0;                     //   the device's shared memory per SM (the carveout)
  std::int32_t windowed_block_slots = 0;              //   shared-memory sums of the largest block
  std::int32_t windowed_window_columns = 0;           //   (describe())
  std::int64_t windowed_padding = 0;                  //   (describe())
  gpukit::device_buffer<std::uint32_t> windowed_packed;
  gpukit::device_buffer<double> windowed_values;      //   sized in bytes for double; float plans use the first half
  gpukit::device_buffer<std::int64_t> windowed_warp_begin;
  gpukit::device_buffer<std::int64_t> windowed_warp_row0;
  gpukit::device_buffer<std::int64_t> windowed_warp_slot0;
  gpukit::device_buffer<std::int64_t> windowed_row_slot;  //   empty: one slot per row
  std::int32_t windowed_row_slots_max = 1;            //   (describe())
};

int current_sm_count();      // spmv.cu
int current_shared_per_sm();  // spmv.cu: shared memory per SM, bytes

}  // namespace sparse::detail
