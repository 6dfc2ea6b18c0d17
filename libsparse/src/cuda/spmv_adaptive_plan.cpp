// The adaptive partition: rows binned by length into stream, warp, block and split tiles (host side, once
// per plan), and its upload. No CUDA syntax: the kernel is spmv_adaptive.cuh.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>

#include "instantiate.hpp"
#include "spmv_adaptive_plan.hpp"

namespace sparse::detail {
namespace {

spmv_tile empty_stream_tile(std::int64_t first_segment) {
  spmv_tile t;
  t.kind = tile_stream;
  t.first = first_segment;
  return t;
}

/// The partition as rows arrive in order. The open stream tile takes short rows as they come; a longer
/// row in between only ends the current segment. The tile closes at its entry, row or segment budget.
class partition_builder {
public:
  adaptive_partition p;

  void add_short_row(std::int64_t i, std::int64_t first_entry, std::int64_t length) {
    const bool new_run = last_short_ != i - 1;
    if (open_.entries + length > stream_tile_entries || open_.rows + 1 > stream_tile_rows ||
        (new_run && open_.count == stream_tile_segments))
      close_stream();
    if (open_.count == 0 || new_run) {
      spmv_segment seg;
      seg.first_row = i;
      seg.p0 = first_entry;
      seg.q0 = open_.entries;
      seg.r0 = open_.rows;
      p.segments.push_back(seg);
      ++open_.count;
    }
    open_.entries += static_cast<std::int32_t>(length);
    ++open_.rows;
    last_short_ = i;
  }

  void add_block_row(std::int64_t i) {
    spmv_tile t;
    t.kind = tile_block;
    t.first = i;
    push(t);
  }

  /// A row longer than a block takes: chunks of split_chunk entries, one block and one partial slot each.
  void add_split_row(std::int64_t i, std::int64_t first_entry, std::int64_t length) {
    spmv_split_row s;
    s.row = i;
    s.first_slot = p.partial_slots;
    s.chunks = (length + split_chunk - 1) / split_chunk;
    for (std::int64_t c = 0; c < s.chunks; ++c) {
      spmv_tile t;
      t.kind = tile_split;
      t.first = i;
      t.begin = first_entry + c * split_chunk;
      t.count = static_cast<std::int32_t>(std::min(split_chunk, length - c * split_chunk));
      t.slot = p.partial_slots++;
      t.split = static_cast<std::int32_t>(p.split_rows.size());  // the index s gets below
      push(t);
    }
    p.split_rows.push_back(s);
  }

  void close_stream() {
    open_.lanes = stream_lanes(open_.entries, open_.rows);
    if (open_.rows > 0) push(open_);
    open_ = empty_stream_tile(static_cast<std::int64_t>(p.segments.size()));
  }

  /// Medium rows (p.warp_rows, in their final order): 8 per tile, a warp each.
  void add_warp_tiles() {
    for (std::size_t k = 0; k < p.warp_rows.size(); k += warps_per_tile) {
      spmv_tile t;
      t.kind = tile_warp;
      t.first = static_cast<std::int64_t>(k);
      t.count = static_cast<std::int32_t>(std::min<std::size_t>(warps_per_tile, p.warp_rows.size() - k));
      push(t);
    }
  }

private:
  void push(const spmv_tile& t) {
    ++p.counts[t.kind];
    p.tiles.push_back(t);
  }
  spmv_tile open_ = empty_stream_tile(0);
  std::int64_t last_short_ = -2;
};

}  // namespace

template <class Index>
adaptive_partition build_adaptive_partition(std::int64_t rows, const Index* row_ptr, warp_row_order order) {
  auto length = [&](std::int64_t i) { return static_cast<std::int64_t>(row_ptr[i + 1]) - row_ptr[i]; };
  partition_builder b;
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t l = length(i);
    if (l <= stream_max_row) b.add_short_row(i, row_ptr[i], l);
    else if (l <= warp_max_row) b.p.warp_rows.push_back(i);
    else if (l <= block_max_row) b.add_block_row(i);
    else b.add_split_row(i, row_ptr[i], l);
  }
  b.close_stream();
  if (order == warp_row_order::longest_first)
    std::stable_sort(b.p.warp_rows.begin(), b.p.warp_rows.end(),
                     [&](std::int64_t r1, std::int64_t r2) { return length(r1) > length(r2); });
  b.add_warp_tiles();
  // Longest work first: split chunks and block rows start before the many small tiles, so a 100k-entry
  // row is not left to run alone at the end of the grid.
  std::stable_partition(b.p.tiles.begin(), b.p.tiles.end(),
                        [](const spmv_tile& t) { return t.kind == tile_split || t.kind == tile_block; });
  return std::move(b.p);
}

template <class Value, class Index>
adaptive_state<Value> make_adaptive_state(std::int64_t rows, const Index* row_ptr) {
  adaptive_state<Value> s;
  s.partition = build_adaptive_partition(rows, row_ptr);
  const auto& part = s.partition;
  if (part.tiles.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
    throw std::invalid_argument("spmv plan: " + std::to_string(part.tiles.size()) +
                                " adaptive tiles exceed the grid limit of 2^31 - 1 blocks");
  s.tiles = gpukit::device_buffer<spmv_tile>(part.tiles);
  s.segments = gpukit::device_buffer<spmv_segment>(part.segments);
  s.warp_rows = gpukit::device_buffer<std::int64_t>(part.warp_rows);
  s.split = split_row_workspace<Value>(part.split_rows, part.partial_slots);
  return s;
}

std::string details_of(const adaptive_partition& p) {
  return " (tiles: " + std::to_string(p.counts[tile_stream]) + " stream [" + std::to_string(p.segments.size()) +
         " runs], " + std::to_string(p.counts[tile_warp]) + " warp [" + std::to_string(p.warp_rows.size()) + " rows], " +
         std::to_string(p.counts[tile_block]) + " block, " + std::to_string(p.split_rows.size()) + " split rows in " +
         std::to_string(p.counts[tile_split]) + " chunks)";
}

template adaptive_partition build_adaptive_partition<std::int32_t>(std::int64_t, const std::int32_t*, warp_row_order);
template adaptive_partition build_adaptive_partition<std::int64_t>(std::int64_t, const std::int64_t*, warp_row_order);
#define SPARSE_ADAPTIVE_INSTANTIATE(V, I) template adaptive_state<V> make_adaptive_state<V, I>(std::int64_t, const I*);
SPARSE_FOR_EACH_VALUE_INDEX(SPARSE_ADAPTIVE_INSTANTIATE)
#undef SPARSE_ADAPTIVE_INSTANTIATE

}  // namespace sparse::detail
