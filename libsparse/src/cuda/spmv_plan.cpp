// SpMV plan: row statistics, the automatic choice, the adaptive partition (host side, once per matrix),
// and the names of the algorithms. No CUDA syntax: the launches live in spmv.cu.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>
#include <string>

#include "sparse/spmv.hpp"
#include "spmv_plan_state.hpp"

namespace sparse {

const char* to_string(spmv_algorithm a) {
  switch (a) {
    case spmv_algorithm::automatic: return "automatic";
    case spmv_algorithm::scalar: return "scalar";
    case spmv_algorithm::shared_cached: return "shared_cached";
    case spmv_algorithm::warp_per_row: return "warp_per_row";
    case spmv_algorithm::vector: return "vector";
    case spmv_algorithm::adaptive: return "adaptive";
    case spmv_algorithm::block_per_row: return "block_per_row";
    case spmv_algorithm::merge: return "merge";
    case spmv_algorithm::warp_stream: return "warp_stream";
    case spmv_algorithm::stencil: return "stencil";
    case spmv_algorithm::windowed: return "windowed";
  }
  return "unknown";
}

spmv_algorithm parse_spmv_algorithm(std::string_view name) {
  if (name == "auto") return spmv_algorithm::automatic;
  for (auto a : {spmv_algorithm::automatic, spmv_algorithm::scalar, spmv_algorithm::shared_cached,
                 spmv_algorithm::warp_per_row, spmv_algorithm::vector, spmv_algorithm::adaptive,
                 spmv_algorithm::block_per_row, spmv_algorithm::merge, spmv_algorithm::warp_stream,
                 spmv_algorithm::stencil, spmv_algorithm::windowed})
    if (name == to_string(a)) return a;
  throw std::invalid_argument("unknown SpMV algorithm '" + std::string(name) +
                              "' (expected automatic, scalar, shared_cached, warp_per_row, vector, adaptive, "
                              "block_per_row, merge, warp_stream, stencil or windowed)");
}

std::vector<spmv_algorithm> concrete_spmv_algorithms() {
  return {spmv_algorithm::scalar, spmv_algorithm::shared_cached, spmv_algorithm::warp_per_row,
          spmv_algorithm::vector, spmv_algorithm::adaptive, spmv_algorithm::block_per_row, spmv_algorithm::merge,
          spmv_algorithm::warp_stream, spmv_algorithm::stencil, spmv_algorithm::windowed};
}

const char* to_string(cusparse_algorithm a) { return a == cusparse_algorithm::alg1 ? "cusparse_alg1" : "cusparse_alg2"; }

template <class Index>
row_stats compute_row_stats(std::int64_t rows, std::int64_t cols, const Index* row_ptr) {
  row_stats s;
  s.rows = rows;
  s.cols = cols;
  if (rows <= 0) return s;
  s.nnz = static_cast<std::int64_t>(row_ptr[rows]) - static_cast<std::int64_t>(row_ptr[0]);
  s.min_length = static_cast<std::int64_t>(row_ptr[1]) - row_ptr[0];
  double sum_sq = 0;
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t len = static_cast<std::int64_t>(row_ptr[i + 1]) - row_ptr[i];
    if (len < 0) throw std::invalid_argument("spmv plan: row_ptr decreases at row " + std::to_string(i));
    s.min_length = std::min(s.min_length, len);
    s.max_length = std::max(s.max_length, len);
    s.empty_rows += len == 0;
    if (len > 32) {
      ++s.rows_over_32;
      s.nnz_in_rows_over_32 += len;
    }
    s.rows_over_4096 += len > 4096;
    sum_sq += static_cast<double>(len) * static_cast<double>(len);
  }
  s.mean_length = static_cast<double>(s.nnz) / static_cast<double>(rows);
  s.stddev_length = std::sqrt(std::max(0.0, sum_sq / static_cast<double>(rows) - s.mean_length * s.mean_length));
  return s;
}

// The variants and where each wins. Figures: `spmv bench --quick` on an NVIDIA H200, 2026-11-21, float
// values, int32 indices, median us of y = A x, cuSPARSE CSR ALG1 timed in the same run (run 2 unless
// marked: [1] = run 1 of this change, [0] = the first H200 run, same kernel code as now):
//
//   class (rows, entries/row)  scalar  warp_per_row  vector          adaptive     block_per_row  merge  warp_stream  ALG1
//   laplace2d (4.2M, 5)          60.5    1000          175.2 (W=8)   106.2 [0]     3309            94.7    74.0     84.7
//   laplace3d (4.1M, 7)          74.5    1122          176.0 (W=8)   128.0 [0]     3448           113.1    93.0    100.1
//   random16  (2M, 16)          307.3     563          255.5 (W=4)   265.0 [0]     1796           362.6   365.4    240.7
//   powerlaw  (1M, 6.4 mean)  12884      1235         6292            64.8 [0]      849            76.4  18070       57.9
//   random2   (8M, 2)           175.8    1395          161.5 (W=2 streaming) [1]  5188           230.0   168.9    176.6
//   random1000 (20k, 1000)      217.4     157.7         157.1 (W=32)  166.6 [0]      153.8         194.7   305.2    150.8
//   (shared_cached: 72-91 on the Laplacians, 477-846 on random16/random1000, never the best.)
//   Changed since that table (libsparse/README.md, "Latest changes"): scalar on one wave of blocks
//   (laplace2d 59.2-59.7, laplace3d 71.6-72.2), adaptive at 32 registers (powerlaw 58.9), block_per_row
//   with 256 threads and a block per row (random1000 149.9); the choices below are unchanged.
//
//  * scalar (a thread per row, the seed's csrmul_kernel): wins on short uniform rows of ~4-12 entries
//    (the Laplacians: 3.6-3.7 TB/s, 1.34-1.40x ALG1): a warp's 32 rows are one contiguous 0.6-1.5 KB
//    stretch that L1 serves after the first touch, full occupancy, no barrier. Collapses on long or
//    irregular rows (one 200k-entry row serialises its warp: 12.9 ms on powerlaw).
//  * shared_cached (the seed's csrmul_shared): the barrier costs more than the x window saves. Never chosen.
//  * warp_per_row: 4-entry chunks per lane; ties vector(32) on uniformly long rows; 31 of 32 lanes idle
//    on short rows. Never chosen (block_per_row is 2.5 % faster where it would be).
//  * vector (W = 2..32 lanes per row, choose_vector_width: ~4 entries per lane): best measured on
//    uniform rows of 1-3 entries (random2, W = 2, evict-first entry loads because its 32 MB x fights the
//    streamed entries for L2: 161.5 us, 1.10x ALG1 [1]; 172.7 us with plain loads) and of 13-63 entries
//    (random16, W = 4: 255.5 us, still 0.94x ALG1: 32M random 4-byte gathers from L2 bound every
//    variant and cuSPARSE alike at 125-133 G gathers/s).
//  * adaptive (CSR-stream tiles of short rows, a warp per medium row, a block per long row, split very
//    long rows): the best measured on irregular rows (powerlaw 58.9-59.2, 0.98-0.99x ALG1), so it takes everything
//    that is not uniform. Its stream tiles pay two barriers and a staging pass per 2,048 entries: 1.7x
//    slower than scalar on the Laplacians.
//  * block_per_row (256 threads per row, a block per row): uniform rows of 64-1024 entries (random1000
//    150.1-150.2, 1.006x ALG1; a warp per row leaves 2.4 waves of warps with a 40 % full last one).
//    Collapses on short rows.
//  * merge (nnz-balanced merge-path blocks, CSR-stream sums, split rows finished in-kernel): balanced by
//    construction but its per-block staging and barriers cost more than adaptive's bins on powerlaw
//    (76.4 vs 64.8) and 1.5-1.6x scalar on the Laplacians. Never chosen; kept as the load-balanced baseline.
//  * warp_stream (CSR-stream per warp): coalesced entry loads, but 22-25 % behind scalar on the
//    Laplacians (shared-memory staging adds latency that scalar's L1 reuse does not have); 168.9 us on
//    random2, behind streaming vector. Never chosen.
//  * stencil (not a CSR kernel: one pattern byte per row instead of col_idx; see spmv.hpp): not
//    chosen here, since it depends on the columns, not on row statistics. The plan tries it when this
//    function says scalar (the only domain measured: the Laplacians, where it moves 37-40 % fewer bytes,
//    laplace2d 42-46 us and laplace3d 47-52 us against scalar's 60 and 72) and takes it if the
//    matrix qualifies.
// "Uniform" = coefficient of variation of the row lengths < 0.25 and no row longer than 2 x mean + 2.
spmv_algorithm choose_algorithm(const row_stats& s) {
  if (s.rows == 0 || s.nnz == 0) return spmv_algorithm::scalar;  // nothing to balance; smallest launch
  const double cv = s.mean_length > 0 ? s.stddev_length / s.mean_length : 0.0;
  const bool uniform = cv < 0.25 && s.max_length <= 2 * s.mean_length + 2;
  if (!uniform) return spmv_algorithm::adaptive;
  if (s.mean_length < 4) return spmv_algorithm::vector;          // W = 2: one or two entries per lane
  if (s.mean_length <= 12) return spmv_algorithm::scalar;        // Laplacian-like
  if (s.mean_length < 64) return spmv_algorithm::vector;         // W = 4..16: ~4 entries per lane
  if (s.max_length <= 1024) return spmv_algorithm::block_per_row; // <= 4 entries per thread of 256
  return spmv_algorithm::adaptive;                               // uniformly very long rows: blocks
}

int choose_vector_width(const row_stats& s) {
  // The smallest power of two >= a quarter of the mean length, clamped to 2..32: about four entries per
  // lane, four independent gathers in flight. Measured on random16 (H200, us): 4 lanes 255.5, 8 lanes
  // 262.1, 16 lanes (the previous rule, one entry per lane) 263.4-265.8, 32 lanes 323.4.
  int w = 2;
  while (w < 32 && 4.0 * w < s.mean_length) w *= 2;
  return w;
}

// windowed (spmv_windowed.cuh): each warp walks its entries in column-window order, so an SM's gathers
// of x repeat within L1. What can repeat: an SM runs nnz / SMs gathers into the cols / (32 / sizeof(Value))
// 32-byte sectors of x; with reuse = gathers / sectors, a fraction 1 - (1 - e^-reuse) / reuse of them
// can hit L1. Measured on an H200 (bench/experiments/spmv_windowed.cu): random16 in float, reuse 0.97,
// 194-198 us against vector's 255 and ALG1's 240; random1000, reuse 0.61, rows summed in 32 slots of
// interleaved entries: 132 us for the slot sums against block_per_row's 150 and ALG1's 152. Taken where
// automatic's CSR choice is vector or block_per_row (uniform rows), the rows fit the slots (<= 2,048
// entries), the columns fit the packed 22 bits, the matrix is large enough to be gather-bound (>= 2^22
// entries) and reuse >= 0.5 (random16 in double, 0.48, was not measured).
bool windowed_pays(const row_stats& s, std::size_t value_bytes, int sm_count) {
  if (s.cols <= 0 || s.cols > detail::windowed_max_cols || s.nnz < (std::int64_t{1} << 22) || sm_count <= 0 ||
      s.max_length > std::int64_t{detail::windowed_slot_entries} * detail::windowed_max_row_slots)
    return false;
  const double sector_values = 32.0 / static_cast<double>(value_bytes);
  const double reuse = static_cast<double>(s.nnz) * sector_values / (static_cast<double>(sm_count) * static_cast<double>(s.cols));
  return reuse >= 0.5;
}

namespace detail {

template <class Index>
adaptive_partition build_adaptive_partition(std::int64_t rows, const Index* row_ptr, warp_row_order order) {
  adaptive_partition p;
  auto len = [&](std::int64_t i) { return static_cast<std::int64_t>(row_ptr[i + 1]) - row_ptr[i]; };
  auto push = [&](spmv_tile t) {
    ++p.counts[t.kind];
    p.tiles.push_back(t);
  };
  // The open stream tile: short rows are appended as they come; a longer row in between only ends the
  // current segment. The tile closes at the entry, row or segment budget.
  spmv_tile open;
  open.kind = tile_stream;
  std::int64_t last_short = -2;
  auto close_stream = [&] {
    open.lanes = stream_lanes(open.entries, open.rows);
    if (open.rows > 0) push(open);
    open = spmv_tile{};
    open.kind = tile_stream;
    open.first = static_cast<std::int64_t>(p.segments.size());
  };
  close_stream();
  std::int64_t i = 0;
  while (i < rows) {
    const std::int64_t l = len(i);
    if (l <= stream_max_row) {
      if (open.entries + l > stream_tile_entries || open.rows + 1 > stream_tile_rows ||
          (last_short != i - 1 && open.count == stream_tile_segments))
        close_stream();
      if (open.count == 0 || last_short != i - 1) {
        spmv_segment seg;
        seg.first_row = i;
        seg.p0 = static_cast<std::int64_t>(row_ptr[i]);
        seg.q0 = open.entries;
        seg.r0 = open.rows;
        p.segments.push_back(seg);
        ++open.count;
      }
      open.entries += static_cast<std::int32_t>(l);
      ++open.rows;
      last_short = i++;
    } else if (l <= warp_max_row) {
      p.warp_rows.push_back(i++);
    } else if (l <= block_max_row) {
      spmv_tile t;
      t.kind = tile_block;
      t.first = i++;
      push(t);
    } else {
      spmv_split_row s;
      s.row = i;
      s.first_slot = p.partial_slots;
      s.chunks = (l + split_chunk - 1) / split_chunk;
      for (std::int64_t c = 0; c < s.chunks; ++c) {
        spmv_tile t;
        t.kind = tile_split;
        t.first = i;
        t.begin = static_cast<std::int64_t>(row_ptr[i]) + c * split_chunk;
        t.count = static_cast<std::int32_t>(std::min(split_chunk, l - c * split_chunk));
        t.slot = p.partial_slots++;
        t.split = static_cast<std::int32_t>(p.split_rows.size());  // the index s gets below
        push(t);
      }
      p.split_rows.push_back(s);
      ++i;
    }
  }
  close_stream();
  if (order == warp_row_order::longest_first)
    std::stable_sort(p.warp_rows.begin(), p.warp_rows.end(),
                     [&](std::int64_t r1, std::int64_t r2) { return len(r1) > len(r2); });
  // Medium rows: 8 per tile, a warp each, in the order above.
  for (std::size_t k = 0; k < p.warp_rows.size(); k += warps_per_tile) {
    spmv_tile t;
    t.kind = tile_warp;
    t.first = static_cast<std::int64_t>(k);
    t.count = static_cast<std::int32_t>(std::min<std::size_t>(warps_per_tile, p.warp_rows.size() - k));
    push(t);
  }
  // Longest work first: split chunks and block rows start before the many small tiles, so a 100k-entry
  // row is not left to run alone at the end of the grid.
  std::stable_partition(p.tiles.begin(), p.tiles.end(),
                        [](const spmv_tile& t) { return t.kind == tile_split || t.kind == tile_block; });
  return p;
}

template <class Index>
merge_partition build_merge_partition(std::int64_t rows, const Index* row_ptr) {
  merge_partition m;
  const std::int64_t nnz = rows > 0 ? static_cast<std::int64_t>(row_ptr[rows]) : 0;
  const std::int64_t items = rows + nnz;
  const std::int64_t nblocks = (items + merge_tile - 1) / merge_tile;
  auto end_of = [&](std::int64_t i) { return static_cast<std::int64_t>(row_ptr[i + 1]); };
  // Merge-path search: the coordinate (rows ended, entries consumed) on diagonal d. A row's end comes
  // before entry j when end_of(row) <= j (the same tie rule as the kernel's pass).
  for (std::int64_t b = 0; b <= nblocks; ++b) {
    const std::int64_t d = std::min(b * merge_tile, items);
    std::int64_t lo = std::max<std::int64_t>(0, d - nnz), hi = std::min(d, rows);
    while (lo < hi) {
      const std::int64_t mid = lo + (hi - lo) / 2;
      if (end_of(mid) <= d - 1 - mid) lo = mid + 1;
      else hi = mid;
    }
    spmv_merge_block blk;
    blk.row = lo;
    blk.nz = d - lo;
    m.blocks.push_back(blk);
  }
  auto add_slot = [&](std::int64_t row) {
    const std::int64_t slot = m.partial_slots++;
    if (m.split_rows.empty() || m.split_rows.back().row != row) {
      spmv_split_row r;
      r.row = row;
      r.first_slot = slot;
      m.split_rows.push_back(r);
    }
    ++m.split_rows.back().chunks;
    return slot;
  };
  for (std::int64_t b = 0; b < nblocks; ++b) {
    auto& blk = m.blocks[static_cast<std::size_t>(b)];
    const auto& next = m.blocks[static_cast<std::size_t>(b + 1)];
    // The first row crosses the block's start (began before it), or the block lies inside one row.
    const auto split_index = [&] { return static_cast<std::int64_t>(m.split_rows.size()) - 1; };
    if (blk.row == next.row || blk.nz > static_cast<std::int64_t>(row_ptr[blk.row])) {
      blk.first_slot = add_slot(blk.row);
      blk.first_split = split_index();
    }
    // The last row is open at the block's end with entries in this block.
    if (next.row > blk.row && next.row < rows && next.nz > static_cast<std::int64_t>(row_ptr[next.row])) {
      blk.last_slot = add_slot(next.row);
      blk.last_split = split_index();
    }
  }
  return m;
}

template <class Index>
stencil_table build_stencil_table(std::int64_t rows, const Index* row_ptr, const fetch_columns<Index>& fetch,
                                  std::int64_t chunk_entries) {
  stencil_table t;
  auto row_length = [&](std::int64_t i) { return static_cast<std::int64_t>(row_ptr[i + 1]) - row_ptr[i]; };
  for (std::int64_t i = 0; i < rows; ++i)  // row_ptr alone rules out long rows: no column is fetched
    if (row_length(i) > stencil_max_row) {
      t.why_not = "row " + std::to_string(i) + " has " + std::to_string(row_length(i)) + " entries (at most " +
                  std::to_string(stencil_max_row) + ")";
      return t;
    }
  t.pattern_of_row.resize(static_cast<std::size_t>(rows));
  std::map<std::vector<std::int32_t>, int> ids;
  std::vector<const std::vector<std::int32_t>*> by_id;  // keys of `ids` in id order
  std::vector<std::int32_t> offsets;
  std::vector<Index> cols;
  int last = -1;
  std::int64_t total_offsets = 0;
  chunk_entries = std::max<std::int64_t>(chunk_entries, stencil_max_row);
  for (std::int64_t row = 0; row < rows;) {
    // Rows [row, end): as many whole rows as fit in one piece.
    const std::int64_t first = row_ptr[row];
    std::int64_t end = row + 1;
    while (end < rows && static_cast<std::int64_t>(row_ptr[end + 1]) - first <= chunk_entries) ++end;
    const std::int64_t count = static_cast<std::int64_t>(row_ptr[end]) - first;
    cols.resize(static_cast<std::size_t>(count));
    if (count > 0) fetch(first, count, cols.data());
    for (std::int64_t i = row; i < end; ++i) {
      offsets.clear();
      for (std::int64_t p = row_ptr[i]; p < row_ptr[i + 1]; ++p) {
        const std::int64_t off = static_cast<std::int64_t>(cols[static_cast<std::size_t>(p - first)]) - i;
        if (off < std::numeric_limits<std::int32_t>::min() || off > std::numeric_limits<std::int32_t>::max()) {
          t.why_not = "row " + std::to_string(i) + " has a column more than 2^31 - 1 away from the row index";
          return t;
        }
        offsets.push_back(static_cast<std::int32_t>(off));
      }
      if (last < 0 || *by_id[static_cast<std::size_t>(last)] != offsets) {  // most rows repeat the previous one
        auto it = ids.find(offsets);
        if (it == ids.end()) {
          if (static_cast<int>(by_id.size()) == stencil_max_patterns) {
            t.why_not = "more than " + std::to_string(stencil_max_patterns) +
                        " distinct column-offset patterns (row " + std::to_string(i) + " starts one more)";
            return t;
          }
          total_offsets += static_cast<std::int64_t>(offsets.size());
          if (static_cast<std::int64_t>(by_id.size()) + 2 + total_offsets > stencil_table_words) {
            t.why_not = "the patterns need more than " + std::to_string(stencil_table_words) +
                        " table words (row " + std::to_string(i) + ")";
            return t;
          }
          it = ids.emplace(offsets, static_cast<int>(by_id.size())).first;
          by_id.push_back(&it->first);
        }
        last = it->second;
      }
      t.pattern_of_row[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(last);
    }
    row = end;
  }
  t.patterns = static_cast<std::int32_t>(by_id.size());
  t.words.assign(static_cast<std::size_t>(t.patterns) + 1, 0);
  for (std::size_t p = 0; p < by_id.size(); ++p) {
    t.words[p] = static_cast<std::int32_t>(t.words.size() - (static_cast<std::size_t>(t.patterns) + 1));
    t.words.insert(t.words.end(), by_id[p]->begin(), by_id[p]->end());
  }
  t.words[static_cast<std::size_t>(t.patterns)] = static_cast<std::int32_t>(total_offsets);
  return t;
}

template <class Index>
windowed_layout build_windowed_layout(std::int64_t rows, std::int64_t cols, const Index* row_ptr, const Index* col_idx,
                                      std::int64_t target_warps, int window_columns, int max_warp_slots) {
  windowed_layout w;
  if (cols > windowed_max_cols) {
    w.why_not = std::to_string(cols) + " columns (at most " + std::to_string(windowed_max_cols) +
                ": an entry packs its column in 22 bits)";
    return w;
  }
  if (window_columns < 1 || (window_columns & (window_columns - 1)) != 0 || max_warp_slots < windowed_max_row_slots ||
      max_warp_slots > windowed_max_warp_slots)
    throw std::invalid_argument("windowed layout: window of " + std::to_string(window_columns) +
                                " columns (a power of two expected), " + std::to_string(max_warp_slots) + " slots per warp");
  constexpr std::int64_t longest = std::int64_t{windowed_slot_entries} * windowed_max_row_slots;
  auto slots_of = [&](std::int64_t r) {
    const std::int64_t len = static_cast<std::int64_t>(row_ptr[r + 1]) - row_ptr[r];
    return std::max<std::int64_t>(1, (len + windowed_slot_entries - 1) / windowed_slot_entries);
  };
  for (std::int64_t r = 0; r < rows; ++r)
    if (static_cast<std::int64_t>(row_ptr[r + 1]) - row_ptr[r] > longest) {
      w.why_not = "row " + std::to_string(r) + " has " + std::to_string(static_cast<std::int64_t>(row_ptr[r + 1]) - row_ptr[r]) +
                  " entries (at most " + std::to_string(longest) + ")";
      return w;
    }
  w.window_columns = window_columns;
  int shift = 0;
  while ((1 << shift) < window_columns) ++shift;
  const std::int64_t nnz = rows > 0 ? static_cast<std::int64_t>(row_ptr[rows]) : 0;
  // Each row's first slot; kept only if some row has more than one.
  std::vector<std::int64_t> row_slot(static_cast<std::size_t>(rows) + 1, 0);
  for (std::int64_t r = 0; r < rows; ++r) row_slot[static_cast<std::size_t>(r) + 1] = row_slot[static_cast<std::size_t>(r)] + slots_of(r);
  // Row ranges of whole rows: close a warp once it holds its share of entries + rows, or before the next
  // row's slots would exceed max_warp_slots.
  target_warps = std::max<std::int64_t>(1, target_warps);
  const std::int64_t share = std::max<std::int64_t>(1, (nnz + rows + target_warps - 1) / target_warps);
  w.warp_row0.push_back(0);
  for (std::int64_t r = 0, weight = 0; r < rows; ++r) {
    const std::int64_t first = w.warp_row0.back();
    if (r > first && row_slot[static_cast<std::size_t>(r) + 1] - row_slot[static_cast<std::size_t>(first)] > max_warp_slots) {
      w.warp_row0.push_back(r);
      weight = 0;
    }
    weight += static_cast<std::int64_t>(row_ptr[r + 1]) - row_ptr[r] + 1;
    if (weight >= share && r + 1 < rows) {
      w.warp_row0.push_back(r + 1);
      weight = 0;
    }
  }
  w.warp_row0.push_back(rows);
  const std::int64_t warps = static_cast<std::int64_t>(w.warp_row0.size()) - 1;
  for (const std::int64_t r : w.warp_row0) w.warp_slot0.push_back(row_slot[static_cast<std::size_t>(r)]);
  w.packed.reserve(static_cast<std::size_t>(nnz + nnz / 16 + 32));
  w.source.reserve(w.packed.capacity());
  std::vector<std::int64_t> sorted, count, waiting, still;
  std::vector<std::int64_t> in_group(static_cast<std::size_t>(max_warp_slots), -1), blocked(in_group), pending(in_group.size(), 0);
  for (std::int64_t g = 0; g < warps; ++g) {
    w.warp_begin.push_back(static_cast<std::int64_t>(w.packed.size()));
    const std::int64_t r0 = w.warp_row0[static_cast<std::size_t>(g)], r1 = w.warp_row0[static_cast<std::size_t>(g) + 1];
    const std::int64_t b = row_ptr[r0], e = row_ptr[r1];
    // Sort the warp's entries by (window, row, column), stable in storage order (rows ascending,
    // columns ascending within a row): a counting sort over the windows it touches, or a comparison
    // sort where those windows far outnumber its entries (narrow windows, few entries per warp).
    std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = -1;
    for (std::int64_t k = b; k < e; ++k) {
      const std::int64_t win = static_cast<std::int64_t>(col_idx[k]) >> shift;
      lo = std::min(lo, win);
      hi = std::max(hi, win);
    }
    sorted.resize(static_cast<std::size_t>(e - b));
    auto window_of = [&](std::int64_t k) { return static_cast<std::int64_t>(col_idx[k]) >> shift; };
    if (e > b && hi - lo >= 4 * (e - b) + 64) {
      for (std::int64_t k = b; k < e; ++k) sorted[static_cast<std::size_t>(k - b)] = k;
      std::stable_sort(sorted.begin(), sorted.end(), [&](std::int64_t p, std::int64_t q) { return window_of(p) < window_of(q); });
    } else if (e > b) {
      count.assign(static_cast<std::size_t>(hi - lo + 2), 0);
      for (std::int64_t k = b; k < e; ++k) ++count[static_cast<std::size_t>((static_cast<std::int64_t>(col_idx[k]) >> shift) - lo + 1)];
      for (std::size_t i = 1; i < count.size(); ++i) count[i] += count[i - 1];
      for (std::int64_t k = b; k < e; ++k)
        sorted[static_cast<std::size_t>(count[static_cast<std::size_t>((static_cast<std::int64_t>(col_idx[k]) >> shift) - lo)]++)] = k;
    }
    // Each entry's slot within the warp: entry t of row r (t from 0) is in the row's slot t mod S_r.
    const std::int64_t s0 = w.warp_slot0[static_cast<std::size_t>(g)];
    std::vector<std::int32_t> local_row(static_cast<std::size_t>(e - b));
    for (std::int64_t r = r0; r < r1; ++r) {
      const std::int64_t slots = row_slot[static_cast<std::size_t>(r) + 1] - row_slot[static_cast<std::size_t>(r)];
      for (std::int64_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k)
        local_row[static_cast<std::size_t>(k - b)] =
            static_cast<std::int32_t>(row_slot[static_cast<std::size_t>(r)] - s0 + (k - row_ptr[r]) % slots);
    }
  // Conflict-free groups of 32, first come first served (see windowed_layout).
    waiting.clear();
    std::size_t pos = 0;
    for (std::int64_t group = 0; pos < sorted.size() || !waiting.empty(); ++group) {
      int taken = 0;
      auto take = [&](std::int64_t k) {
        const std::int32_t r = local_row[static_cast<std::size_t>(k - b)];
        in_group[static_cast<std::size_t>(r)] = group;
        w.packed.push_back(static_cast<std::uint32_t>(r) << windowed_column_bits | static_cast<std::uint32_t>(col_idx[k]));
        w.source.push_back(k);
        ++taken;
      };
      still.clear();
      for (const std::int64_t k : waiting) {
        const auto r = static_cast<std::size_t>(local_row[static_cast<std::size_t>(k - b)]);
        if (taken < 32 && in_group[r] != group && blocked[r] != group) {
          take(k);
          --pending[r];
        } else {
          blocked[r] = group;  // later entries of this row stay behind this one
          still.push_back(k);
        }
      }
      waiting.swap(still);
      for (; taken < 32 && pos < sorted.size() && waiting.size() < windowed_max_waiting; ++pos) {
        const std::int64_t k = sorted[pos];
        const auto r = static_cast<std::size_t>(local_row[static_cast<std::size_t>(k - b)]);
        if (in_group[r] != group && pending[r] == 0) {
          take(k);
        } else {
          ++pending[r];
          waiting.push_back(k);
        }
      }
      for (; taken < 32; ++taken) {
        w.packed.push_back(windowed_pad);
        w.source.push_back(-1);
      }
    }
    for (std::int64_t q = 0; q < w.warp_slot0[static_cast<std::size_t>(g) + 1] - s0; ++q) {  // reset this warp's marks
      in_group[static_cast<std::size_t>(q)] = -1;
      blocked[static_cast<std::size_t>(q)] = -1;
    }
  }
  w.warp_begin.push_back(static_cast<std::int64_t>(w.packed.size()));
  w.padding = static_cast<std::int64_t>(w.packed.size()) - nnz;
  for (std::int64_t g = 0; g < warps; g += windowed_warps_per_block) {
    const std::int64_t end = std::min<std::int64_t>(g + windowed_warps_per_block, warps);
    w.max_block_slots = std::max<std::int32_t>(
        w.max_block_slots, static_cast<std::int32_t>(w.warp_slot0[static_cast<std::size_t>(end)] - w.warp_slot0[static_cast<std::size_t>(g)]));
  }
  if (row_slot.back() > rows) w.row_slot = std::move(row_slot);
  return w;
}

}  // namespace detail

template <class Value, class Index>
spmv_plan<Value, Index>::spmv_plan(const device_csr<Value, Index>& a, spmv_algorithm algorithm, int vector_width)
    : view_(a.view()), requested_(algorithm) {
  std::vector<Index> host_row_ptr(static_cast<std::size_t>(a.rows() + 1), Index(0));
  if (a.rows() > 0)
    gpukit::copy_to_host(host_row_ptr.data(), view_.row_ptr, host_row_ptr.size() * sizeof(Index));
  build(host_row_ptr.data(), vector_width);
}

template <class Value, class Index>
spmv_plan<Value, Index>::spmv_plan(const csr_view<Value, Index>& device_view, const Index* host_row_ptr,
                                   spmv_algorithm algorithm, int vector_width)
    : view_(device_view), requested_(algorithm) {
  if (device_view.rows < 0 || device_view.cols < 0 || host_row_ptr == nullptr)
    throw std::invalid_argument("spmv plan: negative shape or no row_ptr");
  if (static_cast<std::int64_t>(host_row_ptr[device_view.rows]) - host_row_ptr[0] != device_view.nnz)
    throw std::invalid_argument("spmv plan: row_ptr[rows] - row_ptr[0] = " +
                                std::to_string(static_cast<std::int64_t>(host_row_ptr[device_view.rows]) -
                                               host_row_ptr[0]) +
                                " differs from nnz = " + std::to_string(device_view.nnz));
  build(host_row_ptr, vector_width);
}

template <class Value, class Index>
void spmv_plan<Value, Index>::build(const Index* host_row_ptr, int vector_width) {
  if (vector_width != 0 && vector_width != 2 && vector_width != 4 && vector_width != 8 && vector_width != 16 &&
      vector_width != 32)
    throw std::invalid_argument("spmv plan: vector width " + std::to_string(vector_width) +
                                " (expected 0 = choose, 2, 4, 8, 16 or 32)");
  stats_ = compute_row_stats(view_.rows, view_.cols, host_row_ptr);
  if (host_row_ptr[0] != 0) throw std::invalid_argument("spmv plan: row_ptr[0] must be 0");
  algorithm_ = requested_ == spmv_algorithm::automatic ? choose_algorithm(stats_) : requested_;
  vector_width_ = vector_width != 0 ? vector_width : choose_vector_width(stats_);
  state_ = std::make_unique<detail::spmv_plan_state>();
  state_->sm_count = detail::current_sm_count();
  // stencil: asked for, or automatic where the CSR choice is scalar (the only place it was measured:
  // the Laplacians, where it reads 37-40 % fewer bytes than scalar); the analysis reads col_idx back.
  const bool try_stencil = requested_ == spmv_algorithm::stencil ||
                           (requested_ == spmv_algorithm::automatic && algorithm_ == spmv_algorithm::scalar &&
                            stats_.nnz > 0 && stats_.max_length <= detail::stencil_max_row);
  if (try_stencil) {
    const Index* d_cols = view_.col_idx;
    const auto table = detail::build_stencil_table<Index>(
        view_.rows, host_row_ptr, [d_cols](std::int64_t first, std::int64_t count, Index* dst) {
          gpukit::copy_to_host(dst, d_cols + first, static_cast<std::size_t>(count) * sizeof(Index));
        });
    if (table.usable()) {
      algorithm_ = spmv_algorithm::stencil;
      state_->stencil_patterns = table.patterns;
      state_->stencil_unrolled = stats_.max_length <= 8;
      state_->stencil_rows = gpukit::device_buffer<std::uint8_t>(table.pattern_of_row);
      state_->stencil_table = gpukit::device_buffer<std::int32_t>(table.words);
    } else if (requested_ == spmv_algorithm::stencil) {
      throw std::invalid_argument("spmv plan: the stencil algorithm does not apply to this matrix: " + table.why_not);
    }
  }
  // windowed: asked for, or automatic where the CSR choice is vector or block_per_row and the L1 reuse
  // pays (see windowed_pays); the layout reads col_idx and the values back and keeps its own ordered copy.
  if (requested_ == spmv_algorithm::windowed ||
      (requested_ == spmv_algorithm::automatic &&
       (algorithm_ == spmv_algorithm::vector || algorithm_ == spmv_algorithm::block_per_row) &&
       windowed_pays(stats_, sizeof(Value), state_->sm_count)))
    build_windowed(host_row_ptr);
  // Chunked loads when a lane gets at least two 4-entry chunks of a typical row (random1000 at 32 lanes:
  // 157 us, as warp_per_row; one chunk per lane was never better than strided lanes). Evict-first entry
  // loads when x is larger than 16 MiB, a third of the 50 MB L2 (random2, 32 MB x: 161 vs 173 us; with
  // 8 MB x they change nothing measurable).
  state_->vector_chunked = stats_.mean_length >= 8.0 * vector_width_;
  state_->vector_streaming = !state_->vector_chunked && static_cast<double>(stats_.cols) * sizeof(Value) > 16.0 * (1 << 20);
  if (algorithm_ == spmv_algorithm::merge) {
    auto& m = state_->merge;
    m = detail::build_merge_partition(view_.rows, host_row_ptr);
    if (m.blocks.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
      throw std::invalid_argument("spmv plan: " + std::to_string(m.blocks.size()) +
                                  " merge blocks exceed the grid limit of 2^31 - 1 blocks");
    state_->merge_blocks = gpukit::device_buffer<detail::spmv_merge_block>(m.blocks);
    state_->split_rows = gpukit::device_buffer<detail::spmv_split_row>(m.split_rows);
    state_->partials = gpukit::device_buffer<double>(m.partial_slots);
    state_->split_arrivals = gpukit::device_buffer<int>(static_cast<std::int64_t>(m.split_rows.size()));
    if (!m.split_rows.empty()) state_->split_arrivals.fill_bytes(0);
  }
  if (algorithm_ == spmv_algorithm::adaptive) {
    auto& part = state_->partition;
    part = detail::build_adaptive_partition(view_.rows, host_row_ptr);
    if (part.tiles.size() > static_cast<std::size_t>(std::numeric_limits<std::int32_t>::max()))
      throw std::invalid_argument("spmv plan: " + std::to_string(part.tiles.size()) +
                                  " adaptive tiles exceed the grid limit of 2^31 - 1 blocks");
    state_->tiles = gpukit::device_buffer<detail::spmv_tile>(part.tiles);
    state_->segments = gpukit::device_buffer<detail::spmv_segment>(part.segments);
    state_->warp_rows = gpukit::device_buffer<std::int64_t>(part.warp_rows);
    state_->split_rows = gpukit::device_buffer<detail::spmv_split_row>(part.split_rows);
    state_->partials = gpukit::device_buffer<double>(part.partial_slots);
    state_->split_arrivals = gpukit::device_buffer<int>(static_cast<std::int64_t>(part.split_rows.size()));
    if (!part.split_rows.empty()) state_->split_arrivals.fill_bytes(0);
  }
}

template <class Value, class Index>
void spmv_plan<Value, Index>::build_windowed(const Index* host_row_ptr) {
  const auto nnz = static_cast<std::size_t>(view_.nnz);
  std::vector<Index> cols(nnz);
  std::vector<Value> values(nnz);
  if (nnz > 0) {
    gpukit::copy_to_host(cols.data(), view_.col_idx, nnz * sizeof(Index));
    gpukit::copy_to_host(values.data(), view_.values, nnz * sizeof(Value));
  }
  // Two blocks of 16 warps per SM, at least ~64 slots (about rows + entries / 32) per warp so groups of
  // 32 distinct slots fill; the shared-memory sums of a block stay within 96 KB (1,023 float slots or
  // 768 double slots per warp).
  const std::int64_t slots = view_.rows + view_.nnz / detail::windowed_slot_entries;
  const std::int64_t target_warps = std::min<std::int64_t>(std::int64_t{2} * detail::windowed_warps_per_block * state_->sm_count,
                                                           std::max<std::int64_t>(1, slots / 64));
  const int max_slots = static_cast<int>(std::min<std::size_t>(detail::windowed_max_warp_slots,
                                                               (96u << 10) / (detail::windowed_warps_per_block * sizeof(Value))));
  auto w = detail::build_windowed_layout<Index>(view_.rows, view_.cols, host_row_ptr, cols.data(), target_warps,
                                                detail::windowed_window_bytes / static_cast<int>(sizeof(Value)), max_slots);
  if (w.usable() && (w.warps() + detail::windowed_warps_per_block - 1) / detail::windowed_warps_per_block >
                        std::numeric_limits<std::int32_t>::max())
    w.why_not = std::to_string(w.warps()) + " warps exceed the grid limit of 2^31 - 1 blocks";
  if (!w.usable()) {
    if (requested_ == spmv_algorithm::windowed)
      throw std::invalid_argument("spmv plan: the windowed algorithm does not apply to this matrix: " + w.why_not);
    return;  // automatic keeps its CSR choice
  }
  std::vector<Value> ordered(w.packed.size(), Value(0));
  for (std::size_t i = 0; i < ordered.size(); ++i)
    if (w.source[i] >= 0) ordered[i] = values[static_cast<std::size_t>(w.source[i])];
  algorithm_ = spmv_algorithm::windowed;
  auto& st = *state_;
  st.shared_per_sm = detail::current_shared_per_sm();
  st.windowed_warps = w.warps();
  st.windowed_block_slots = w.max_block_slots;
  st.windowed_window_columns = w.window_columns;
  st.windowed_padding = w.padding;
  st.windowed_packed = gpukit::device_buffer<std::uint32_t>(w.packed);
  st.windowed_values = gpukit::device_buffer<double>(static_cast<std::int64_t>((ordered.size() * sizeof(Value) + 7) / 8));
  if (!ordered.empty()) gpukit::copy_to_device(st.windowed_values.data(), ordered.data(), ordered.size() * sizeof(Value));
  st.windowed_warp_begin = gpukit::device_buffer<std::int64_t>(w.warp_begin);
  st.windowed_warp_row0 = gpukit::device_buffer<std::int64_t>(w.warp_row0);
  st.windowed_warp_slot0 = gpukit::device_buffer<std::int64_t>(w.warp_slot0);
  st.windowed_row_slot = gpukit::device_buffer<std::int64_t>(w.row_slot);
  st.windowed_row_slots_max = 1;
  for (std::size_t r = 0; r + 1 < w.row_slot.size(); ++r)
    st.windowed_row_slots_max = std::max<std::int32_t>(st.windowed_row_slots_max, static_cast<std::int32_t>(w.row_slot[r + 1] - w.row_slot[r]));
}

template <class Value, class Index>
spmv_plan<Value, Index>::spmv_plan(spmv_plan&&) noexcept = default;
template <class Value, class Index>
spmv_plan<Value, Index>& spmv_plan<Value, Index>::operator=(spmv_plan&&) noexcept = default;
template <class Value, class Index>
spmv_plan<Value, Index>::~spmv_plan() = default;

template <class Value, class Index>
std::string spmv_plan<Value, Index>::describe() const {
  std::ostringstream o;
  o << to_string(algorithm_);
  if (algorithm_ == spmv_algorithm::vector)
    o << " (" << vector_width_ << " lanes per row" << (state_->vector_chunked ? ", 4-entry chunks" : "")
      << (state_->vector_streaming ? ", streaming loads" : "") << ")";
  if (algorithm_ == spmv_algorithm::stencil)
    o << " (" << state_->stencil_patterns << " row patterns, "
      << state_->stencil_table.size() - state_->stencil_patterns - 1 << " offsets"
      << (state_->stencil_unrolled ? ", 8 loads in flight" : "") << ")";
  if (algorithm_ == spmv_algorithm::windowed)
    o << " (" << state_->windowed_warps << " warps, windows of " << state_->windowed_window_columns << " columns, "
      << state_->windowed_padding << " pad entries"
      << (state_->windowed_row_slots_max > 1 ? ", up to " + std::to_string(state_->windowed_row_slots_max) + " slots per row" : "")
      << ")";
  if (algorithm_ == spmv_algorithm::merge)
    o << " (" << state_->merge.blocks.size() - 1 << " blocks of " << detail::merge_tile << " items, "
      << state_->merge.split_rows.size() << " rows cross a block boundary)";
  if (algorithm_ == spmv_algorithm::adaptive) {
    const auto& p = state_->partition;
    o << " (tiles: " << p.counts[detail::tile_stream] << " stream [" << p.segments.size() << " runs], " << p.counts[detail::tile_warp] << " warp ["
      << p.warp_rows.size() << " rows], " << p.counts[detail::tile_block] << " block, "
      << p.split_rows.size() << " split rows in " << p.counts[detail::tile_split] << " chunks)";
  }
  return o.str();
}

template row_stats compute_row_stats<std::int32_t>(std::int64_t, std::int64_t, const std::int32_t*);
template row_stats compute_row_stats<std::int64_t>(std::int64_t, std::int64_t, const std::int64_t*);
template detail::adaptive_partition detail::build_adaptive_partition<std::int32_t>(std::int64_t, const std::int32_t*,
                                                                                 detail::warp_row_order);
template detail::adaptive_partition detail::build_adaptive_partition<std::int64_t>(std::int64_t, const std::int64_t*,
                                                                                 detail::warp_row_order);
template detail::merge_partition detail::build_merge_partition<std::int32_t>(std::int64_t, const std::int32_t*);
template detail::merge_partition detail::build_merge_partition<std::int64_t>(std::int64_t, const std::int64_t*);
template detail::windowed_layout detail::build_windowed_layout<std::int32_t>(std::int64_t, std::int64_t, const std::int32_t*,
                                                                          const std::int32_t*, std::int64_t, int, int);
template detail::windowed_layout detail::build_windowed_layout<std::int64_t>(std::int64_t, std::int64_t, const std::int64_t*,
                                                                          const std::int64_t*, std::int64_t, int, int);
template detail::stencil_table detail::build_stencil_table<std::int32_t>(std::int64_t, const std::int32_t*,
                                                                         const detail::fetch_columns<std::int32_t>&,
                                                                         std::int64_t);
template detail::stencil_table detail::build_stencil_table<std::int64_t>(std::int64_t, const std::int64_t*,
                                                                         const detail::fetch_columns<std::int64_t>&,
                                                                         std::int64_t);
template class spmv_plan<float, std::int32_t>;
template class spmv_plan<float, std::int64_t>;
template class spmv_plan<double, std::int32_t>;
template class spmv_plan<double, std::int64_t>;

}  // namespace sparse
