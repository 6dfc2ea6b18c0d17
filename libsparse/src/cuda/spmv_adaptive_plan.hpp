// The adaptive algorithm's analysis: the tile list (host side, once per matrix) and what a plan keeps of
// it on the device. Host-only header (no CUDA syntax): shared by the plan (spmv_adaptive_plan.cpp), the
// kernel (spmv_adaptive.cuh) and the dispatch (spmv.cu).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "gpukit/device_buffer.hpp"
#include "spmv_split_rows.hpp"

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

/// What an adaptive plan keeps: the partition (host copy: describe() and the grid size) and its upload.
template <class Value>
struct adaptive_state {
  adaptive_partition partition;
  gpukit::device_buffer<spmv_tile> tiles;
  gpukit::device_buffer<spmv_segment> segments;
  gpukit::device_buffer<std::int64_t> warp_rows;
  split_row_workspace<Value> split;
};

/// Builds the partition of `rows` rows (host row_ptr) and uploads it. Throws std::invalid_argument when
/// the tiles exceed the grid limit of 2^31 - 1 blocks (one block per tile).
template <class Value, class Index>
adaptive_state<Value> make_adaptive_state(std::int64_t rows, const Index* row_ptr);

/// describe()'s details, e.g. " (tiles: 2503 stream [18740 runs], 2252 warp [18016 rows], 122 block,
/// 10 split rows in 50 chunks)".
std::string details_of(const adaptive_partition& p);
template <class Value>
std::string details_of(const adaptive_state<Value>& s) {
  return details_of(s.partition);
}

}  // namespace sparse::detail
