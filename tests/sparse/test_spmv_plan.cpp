// SpMV plans, white-box (the analyses in libsparse/src/cuda): algorithm names, row statistics, the
// automatic choice and its thresholds, and the structure each algorithm's analysis builds (adaptive
// partition, merge partition, stencil table, windowed layout), each checked by a function that returns a
// verdict, and each such checker shown to reject a broken structure; column blocks likewise.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "sparse/generate.hpp"
#include "sparse/spmv.hpp"
#include "spmv_adaptive_plan.hpp"
#include "spmv_column_blocks_plan.hpp"
#include "spmv_merge_plan.hpp"
#include "spmv_plan_state.hpp"
#include "spmv_stencil_plan.hpp"
#include "spmv_test_support.hpp"
#include "spmv_windowed_plan.hpp"
#include "test_support.hpp"

using std::int32_t;
using std::int64_t;
using namespace spmv_test;
namespace d = sparse::detail;

namespace {

using row_ptr_t = std::vector<int64_t>;

int64_t length(const row_ptr_t& ptr, int64_t r) { return ptr[static_cast<std::size_t>(r) + 1] - ptr[static_cast<std::size_t>(r)]; }

// ---- adaptive ----

/// A stream tile: 1..8 segments of consecutive short rows whose offsets chain, within the entry and row
/// budgets, with the lanes stream_lanes gives; marks its rows in `seen`.
void check_stream_tile(const row_ptr_t& ptr, const d::adaptive_partition& p, const d::spmv_tile& t,
                       std::vector<int>& seen, verdict& v) {
  if (t.count < 1 || t.count > d::stream_tile_segments || t.rows < 1 || t.rows > d::stream_tile_rows ||
      t.entries > d::stream_tile_entries || t.lanes != d::stream_lanes(t.entries, t.rows))
    v.fail("a stream tile exceeds its budget or has the wrong lanes");
  int64_t rows_seen = 0, entries_seen = 0;
  for (int k = 0; k < t.count; ++k) {
    const auto& sg = p.segments[static_cast<std::size_t>(t.first + k)];
    const int64_t seg_rows = (k + 1 < t.count ? p.segments[static_cast<std::size_t>(t.first + k + 1)].r0 : t.rows) - sg.r0;
    if (sg.r0 != rows_seen || sg.q0 != entries_seen || sg.p0 != ptr[static_cast<std::size_t>(sg.first_row)] || seg_rows < 1)
      v.fail("segment " + std::to_string(t.first + k) + " does not chain");
    for (int64_t r = sg.first_row; r < sg.first_row + seg_rows; ++r) {
      ++seen[static_cast<std::size_t>(r)];
      if (length(ptr, r) > d::stream_max_row) v.fail("row " + std::to_string(r) + " is too long for a stream tile");
    }
    rows_seen += seg_rows;
    entries_seen += ptr[static_cast<std::size_t>(sg.first_row + seg_rows)] - ptr[static_cast<std::size_t>(sg.first_row)];
  }
  if (rows_seen != t.rows || entries_seen != t.entries) v.fail("a stream tile's rows or entries disagree with its segments");
}

/// A warp, block or split tile: rows of the right lengths; split chunks inside their row and listed.
void check_long_tile(const row_ptr_t& ptr, const d::adaptive_partition& p, const d::spmv_tile& t,
                     std::vector<int>& seen, std::vector<int64_t>& split_covered, verdict& v) {
  if (t.kind == d::tile_warp) {
    if (t.count < 1 || t.count > d::warps_per_tile) v.fail("a warp tile holds " + std::to_string(t.count) + " rows");
    for (int64_t k = t.first; k < t.first + t.count; ++k) {
      const int64_t r = p.warp_rows[static_cast<std::size_t>(k)];
      ++seen[static_cast<std::size_t>(r)];
      if (length(ptr, r) <= d::stream_max_row || length(ptr, r) > d::warp_max_row) v.fail("row " + std::to_string(r) + " in a warp tile");
    }
  } else if (t.kind == d::tile_block) {
    ++seen[static_cast<std::size_t>(t.first)];
    if (length(ptr, t.first) <= d::warp_max_row || length(ptr, t.first) > d::block_max_row)
      v.fail("row " + std::to_string(t.first) + " in a block tile");
  } else {
    split_covered[static_cast<std::size_t>(t.first)] += t.count;
    // The kernel's in-launch finish (finish_split) finds the row's chunk list through t.split.
    const bool listed = t.split >= 0 && static_cast<std::size_t>(t.split) < p.split_rows.size();
    const auto* sr = listed ? &p.split_rows[static_cast<std::size_t>(t.split)] : nullptr;
    if (t.count > d::split_chunk || t.begin < ptr[static_cast<std::size_t>(t.first)] ||
        t.begin + t.count > ptr[static_cast<std::size_t>(t.first) + 1] || !sr || sr->row != t.first ||
        t.slot < sr->first_slot || t.slot >= sr->first_slot + sr->chunks)
      v.fail("a split chunk of row " + std::to_string(t.first) + " is outside its row or its slots");
  }
}

/// Every row covered exactly once, every tile within its budget, medium rows longest first.
verdict check_adaptive_partition(const base_csr& a, const d::adaptive_partition& p) {
  const auto& ptr = a.row_ptr();
  verdict v;
  std::vector<int> seen(static_cast<std::size_t>(a.rows()), 0);
  std::vector<int64_t> split_covered(static_cast<std::size_t>(a.rows()), 0);
  for (const auto& t : p.tiles) {
    if (t.kind == d::tile_stream) check_stream_tile(ptr, p, t, seen, v);
    else check_long_tile(ptr, p, t, seen, split_covered, v);
  }
  for (const auto& s : p.split_rows) {
    ++seen[static_cast<std::size_t>(s.row)];
    if (split_covered[static_cast<std::size_t>(s.row)] != length(ptr, s.row)) v.fail("split row " + std::to_string(s.row) + " not fully covered");
  }
  for (std::size_t r = 0; r < seen.size(); ++r)
    if (seen[r] != 1) v.fail("row " + std::to_string(r) + " covered " + std::to_string(seen[r]) + " times");
  for (std::size_t k = 1; k < p.warp_rows.size(); ++k) {  // warp_row_order::longest_first, ties in row order
    const int64_t r0 = p.warp_rows[k - 1], r1 = p.warp_rows[k];
    if (length(ptr, r0) < length(ptr, r1) || (length(ptr, r0) == length(ptr, r1) && r0 > r1)) v.fail("medium rows not longest first");
  }
  return v;
}

// ---- merge ----

/// Full blocks at valid merge-path coordinates, and exactly the rows whose items fall in more than one
/// block listed, with one partial slot per block they touch, consecutive and in block order.
verdict check_merge_partition(const base_csr& a, const d::merge_partition& m) {
  const auto& ptr = a.row_ptr();
  const int64_t rows = a.rows(), nnz = a.nnz(), items = rows + nnz;
  verdict v;
  if (m.blocks.size() != static_cast<std::size_t>((items + d::merge_tile - 1) / d::merge_tile + 1)) {
    v.fail(std::to_string(m.blocks.size()) + " block coordinates");
    return v;
  }
  if (m.blocks.front().row != 0 || m.blocks.front().nz != 0 || m.blocks.back().row != rows || m.blocks.back().nz != nnz)
    v.fail("the merge path does not run from (0, 0) to (rows, nnz)");
  for (std::size_t b = 0; b + 1 < m.blocks.size(); ++b) {
    const auto& blk = m.blocks[b];
    const auto& next = m.blocks[b + 1];
    const int64_t n = (next.row - blk.row) + (next.nz - blk.nz);
    // Valid coordinate: the rows before it have ended by entry nz, row `row` has not.
    if (n <= 0 || n > d::merge_tile || (b + 2 != m.blocks.size() && n != d::merge_tile) || blk.row < 0 ||
        blk.row >= rows || ptr[static_cast<std::size_t>(blk.row)] > blk.nz || ptr[static_cast<std::size_t>(blk.row) + 1] < blk.nz)
      v.fail("block " + std::to_string(b) + " has a wrong size or an invalid coordinate");
  }
  // Expected split rows: a non-empty row's first entry (item row + ptr[row]) and its end (item
  // row + ptr[row + 1]) in different blocks.
  std::vector<d::spmv_split_row> expected;
  int64_t slot = 0;
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t first = (r + ptr[static_cast<std::size_t>(r)]) / d::merge_tile;
    const int64_t last = (r + ptr[static_cast<std::size_t>(r) + 1]) / d::merge_tile;
    if (length(ptr, r) == 0 || first == last) continue;
    expected.push_back({r, slot, last - first + 1});
    slot += last - first + 1;
  }
  bool same = expected.size() == m.split_rows.size() && slot == m.partial_slots;
  for (std::size_t k = 0; same && k < expected.size(); ++k)
    same = m.split_rows[k].row == expected[k].row && m.split_rows[k].chunks == expected[k].chunks &&
           m.split_rows[k].first_slot == expected[k].first_slot;
  if (!same) v.fail("the rows crossing a block boundary are not listed exactly");
  return v;
}

// ---- stencil ----

/// The table decodes to exactly the matrix's columns (a usable table).
template <class V, class I>
verdict check_stencil_table(const sparse::host_csr<V, I>& a, const d::stencil_table& t) {
  const auto& ptr = a.row_ptr();
  const auto& col = a.col_idx();
  verdict v;
  if (t.pattern_of_row.size() != static_cast<std::size_t>(a.rows()) || t.words.size() < static_cast<std::size_t>(t.patterns) + 1) {
    v.fail("the table's sizes do not match the matrix");
    return v;
  }
  const auto* off = t.words.data() + t.patterns + 1;
  for (int64_t i = 0; i < a.rows(); ++i) {
    const int pid = t.pattern_of_row[static_cast<std::size_t>(i)];
    const int32_t b = t.words[static_cast<std::size_t>(pid)], e = t.words[static_cast<std::size_t>(pid) + 1];
    bool ok = pid < t.patterns && e - b == ptr[i + 1] - ptr[i];
    for (int32_t k = b; ok && k < e; ++k) ok = i + off[k] == col[ptr[i] + (k - b)];
    if (!ok) v.fail("row " + std::to_string(i) + " decodes wrongly");
  }
  return v;
}

/// The packed row starts decode to every row's pattern byte and row_ptr entry (the unrolled kernel's
/// stencil_row_start: the group's base plus the word's high byte, the pattern its low byte).
template <class V, class I>
verdict check_packed_starts(const sparse::host_csr<V, I>& a, const d::stencil_table& t, const d::stencil_row_starts& s) {
  verdict v;
  const auto groups = static_cast<std::size_t>((a.rows() + d::stencil_row_group - 1) / d::stencil_row_group);
  if (s.packed_row.size() != static_cast<std::size_t>(a.rows()) || s.group_start.size() != groups) {
    v.fail("the packed starts' sizes do not match the matrix");
    return v;
  }
  for (int64_t i = 0; i < a.rows(); ++i) {
    const unsigned w = s.packed_row[static_cast<std::size_t>(i)];
    const int64_t begin = s.group_start[static_cast<std::size_t>(i / d::stencil_row_group)] + (w >> 8);
    if ((w & 0xffu) != t.pattern_of_row[static_cast<std::size_t>(i)] || begin != static_cast<int64_t>(a.row_ptr()[i]))
      v.fail("row " + std::to_string(i) + "'s packed start decodes wrongly");
  }
  return v;
}

/// Whether every row starts at most 255 entries after its 32-row group's first (independent of the packer).
template <class V, class I>
bool starts_fit_a_byte(const sparse::host_csr<V, I>& a) {
  for (int64_t i = 0; i < a.rows(); ++i)
    if (a.row_ptr()[i] - a.row_ptr()[i - i % 32] > 255) return false;
  return true;
}

/// Independent verdict on whether the stencil applies: the longest row, the distinct (column - row)
/// sequences and the table words they need.
struct stencil_census {
  int64_t longest = 0, words = 1;
  std::set<std::vector<int64_t>> patterns;
  bool qualifies() const {
    return longest <= d::stencil_max_row && patterns.size() <= static_cast<std::size_t>(d::stencil_max_patterns) &&
           words <= d::stencil_table_words;
  }
};
stencil_census census_of(const base_csr& a) {
  stencil_census c;
  for (int64_t i = 0; i < a.rows(); ++i) {
    std::vector<int64_t> off;
    for (auto q = a.row_ptr()[i]; q < a.row_ptr()[i + 1]; ++q) off.push_back(a.col_idx()[q] - i);
    c.longest = std::max<int64_t>(c.longest, static_cast<int64_t>(off.size()));
    if (c.patterns.insert(off).second) c.words += 1 + static_cast<int64_t>(off.size());
  }
  return c;
}

// ---- windowed ----

int64_t slots_of_row(const base_csr& a, int64_t r) {
  return std::max<int64_t>(1, (length(a.row_ptr(), r) + d::windowed_slot_entries - 1) / d::windowed_slot_entries);
}

/// rows + 1 entries: each row's first slot, then the slot count.
std::vector<int64_t> first_slots_of(const base_csr& a) {
  std::vector<int64_t> first(static_cast<std::size_t>(a.rows()) + 1, 0);
  for (int64_t i = 0; i < a.rows(); ++i) first[static_cast<std::size_t>(i) + 1] = first[static_cast<std::size_t>(i)] + slots_of_row(a, i);
  return first;
}

/// What the kernel's arithmetic must give bitwise: slot j of row r is the fma chain over the row's
/// entries j, j + S, ... in storage order; the row adds its slots in slot order.
std::vector<double> slot_order_sums(const base_csr& a, const std::vector<double>& x) {
  const auto& ptr = a.row_ptr();
  std::vector<double> y(static_cast<std::size_t>(a.rows()), 0.0);
  for (int64_t i = 0; i < a.rows(); ++i) {
    const int64_t slots = slots_of_row(a, i);
    for (int64_t j = 0; j < slots; ++j) {
      double slot = 0;
      for (auto q = ptr[i] + j; q < ptr[i + 1]; q += slots)
        slot = std::fma(a.values()[q], x[static_cast<std::size_t>(a.col_idx()[q])], slot);
      y[static_cast<std::size_t>(i)] = j == 0 ? slot : y[static_cast<std::size_t>(i)] + slot;
    }
  }
  return y;
}

/// The walk of a layout's words: how often each entry appears, each slot's last entry and running sum.
struct layout_walk {
  std::vector<int> seen;
  std::vector<int64_t> last;
  std::vector<double> slot_sum;
};

/// One word of warp (rows r0..r1, first slot s0): a pad word, or an entry of one of the warp's rows,
/// decoding to its slot and column, once per group per slot, in column order within its slot.
void check_word(const base_csr& a, const d::windowed_layout& w, std::size_t k, int64_t r0, int64_t r1, int64_t s0,
                const std::vector<int64_t>& first, const std::vector<double>& x, std::set<int64_t>& group_slots,
                layout_walk& walk, verdict& v) {
  const auto& ptr = a.row_ptr();
  const std::uint32_t word = w.packed[k];
  const int64_t src = w.source[k];
  if (src < 0) {
    if (word != d::windowed_pad) v.fail("word " + std::to_string(k) + ": padding that is not the pad word");
    return;
  }
  if (src < ptr[static_cast<std::size_t>(r0)] || src >= ptr[static_cast<std::size_t>(r1)] || src >= a.nnz()) {
    v.fail("word " + std::to_string(k) + ": an entry outside its warp's rows");
    return;
  }
  const int64_t row = static_cast<int64_t>(std::upper_bound(ptr.begin() + r0, ptr.begin() + r1 + 1, src) - ptr.begin()) - 1;
  const int64_t slot = first[static_cast<std::size_t>(row)] + (src - ptr[static_cast<std::size_t>(row)]) % slots_of_row(a, row);
  const auto s = static_cast<std::size_t>(slot);
  if (static_cast<int64_t>(word >> d::windowed_column_bits) != slot - s0 ||
      static_cast<int64_t>(word & d::windowed_column_mask) != a.col_idx()[static_cast<std::size_t>(src)] || word == d::windowed_pad)
    v.fail("word " + std::to_string(k) + " does not decode to its entry's slot and column");
  if (!group_slots.insert(slot).second) v.fail("word " + std::to_string(k) + ": slot " + std::to_string(slot) + " twice in a group");
  if (src <= walk.last[s]) v.fail("word " + std::to_string(k) + ": slot " + std::to_string(slot) + " out of column order");
  ++walk.seen[static_cast<std::size_t>(src)];
  walk.last[s] = src;
  walk.slot_sum[s] = std::fma(a.values()[static_cast<std::size_t>(src)], x[static_cast<std::size_t>(a.col_idx()[static_cast<std::size_t>(src)])], walk.slot_sum[s]);
}

/// The layout's shape: whole warps of whole rows and whole groups, within max_slots, row_slot as the
/// rows' slots give it, the padding counted, the largest block's slots.
void check_layout_shape(const base_csr& a, const d::windowed_layout& w, int max_slots, const std::vector<int64_t>& first,
                        verdict& v) {
  if (w.row_slot.empty() ? first.back() != a.rows() : w.row_slot != first) v.fail("row_slot disagrees with the rows' slots");
  if (w.padding != static_cast<int64_t>(w.packed.size()) - a.nnz()) v.fail("the padding is miscounted");
  int64_t block_slots = 0;
  for (int64_t g = 0; g < w.warps(); ++g) {
    const auto gs = static_cast<std::size_t>(g);
    const int64_t r0 = w.warp_row0[gs], r1 = w.warp_row0[gs + 1], s0 = w.warp_slot0[gs], s1 = w.warp_slot0[gs + 1];
    const int64_t b = w.warp_begin[gs], e = w.warp_begin[gs + 1];
    if (r1 < r0 || s0 != first[static_cast<std::size_t>(r0)] || s1 != first[static_cast<std::size_t>(r1)] || s1 - s0 > max_slots ||
        b % 32 != 0 || e < b)
      v.fail("warp " + std::to_string(g) + " is not whole rows, whole groups and at most " + std::to_string(max_slots) + " slots");
    if (g % d::windowed_warps_per_block == 0)
      block_slots = std::max(block_slots, w.warp_slot0[static_cast<std::size_t>(std::min<int64_t>(g + d::windowed_warps_per_block, w.warps()))] - s0);
  }
  if (block_slots != w.max_block_slots) v.fail("max_block_slots is not the largest block's slots");
}

/// Every entry exactly once in the slot its position gives it, each slot's entries in column order, no
/// slot twice in a group of 32, and the sums bitwise the slot-order fma chains of slot_order_sums.
verdict check_windowed_layout(const base_csr& a, const d::windowed_layout& w, int max_slots, const std::vector<double>& x) {
  verdict v;
  if (w.packed.size() != w.source.size() || static_cast<int64_t>(w.warp_row0.size()) != w.warps() + 1 ||
      w.warp_slot0.size() != w.warp_row0.size() || w.warp_row0.front() != 0 || w.warp_row0.back() != a.rows() ||
      w.warp_begin.back() != static_cast<int64_t>(w.packed.size())) {
    v.fail("the layout's arrays do not fit together");
    return v;
  }
  const auto first = first_slots_of(a);
  check_layout_shape(a, w, max_slots, first, v);
  layout_walk walk{std::vector<int>(static_cast<std::size_t>(a.nnz()), 0), std::vector<int64_t>(static_cast<std::size_t>(first.back()), -1),
                   std::vector<double>(static_cast<std::size_t>(first.back()), 0.0)};
  for (int64_t g = 0; g < w.warps(); ++g) {
    const auto gs = static_cast<std::size_t>(g);
    for (int64_t q = w.warp_begin[gs]; q < w.warp_begin[gs + 1]; q += 32) {
      std::set<int64_t> group_slots;
      for (int64_t k = q; k < std::min(q + 32, w.warp_begin[gs + 1]); ++k)
        check_word(a, w, static_cast<std::size_t>(k), w.warp_row0[gs], w.warp_row0[gs + 1], w.warp_slot0[gs], first, x,
                   group_slots, walk, v);
    }
  }
  if (std::count(walk.seen.begin(), walk.seen.end(), 1) != a.nnz()) v.fail("an entry is missing or repeated");
  std::vector<double> y(static_cast<std::size_t>(a.rows()), 0.0);
  for (std::size_t i = 0; i < y.size(); ++i)
    for (int64_t q = first[i]; q < first[i + 1]; ++q)
      y[i] = q == first[i] ? walk.slot_sum[static_cast<std::size_t>(q)] : y[i] + walk.slot_sum[static_cast<std::size_t>(q)];
  const auto sums = compare_bits(y, slot_order_sums(a, x));
  if (sums.bad) v.fail("the layout's sums differ bitwise from the slot-order fma chains: " + sums.first);
  return v;
}

// ---- column blocks ----

/// The column-block layout of `a` in `blocks` ranges: block p's entries are exactly a's entries of columns
/// [p width, (p + 1) width), row after row, each row's in column order; its row starts mark them; every
/// entry's offset and source are right. And the CPU twin of the two kernels (each (block, row) partial in
/// storage order, then the partials in block order, in double) matches the oracle within its bound.
verdict check_column_blocks_layout(const base_csr& a, const d::column_blocks_layout& l, int blocks,
                                   const std::vector<double>& x) {
  verdict v;
  const int64_t rows = a.rows(), w = l.width;
  if (l.blocks() != blocks || w != std::max<int64_t>(1, (a.cols() + blocks - 1) / blocks) ||
      l.start.size() != static_cast<std::size_t>(blocks) * static_cast<std::size_t>(rows + 1) ||
      l.col.size() != static_cast<std::size_t>(a.nnz()) || l.source.size() != l.col.size() || l.base[0] != 0 ||
      l.base.back() != a.nnz()) {
    v.fail("the layout's sizes disagree with the matrix");
    return v;
  }
  std::vector<double> y(static_cast<std::size_t>(rows), 0.0);
  for (int p = 0; p < blocks; ++p) {
    const std::uint32_t* st = l.start.data() + static_cast<std::size_t>(p) * static_cast<std::size_t>(rows + 1);
    int64_t at = l.base[static_cast<std::size_t>(p)];
    if (st[0] != 0) v.fail("block " + std::to_string(p) + " does not start at its base");
    for (int64_t r = 0; r < rows; ++r) {
      double partial = 0;
      for (auto q = a.row_ptr()[static_cast<std::size_t>(r)]; q < a.row_ptr()[static_cast<std::size_t>(r) + 1]; ++q) {
        const int64_t c = a.col_idx()[static_cast<std::size_t>(q)];
        if (c / w != p) continue;
        const auto k = static_cast<std::size_t>(at++);
        if (k >= l.col.size() || l.source[k] != q || l.col[k] != c - p * w) {
          v.fail("block " + std::to_string(p) + ", row " + std::to_string(r) + ": entry " + std::to_string(q) + " misplaced");
          return v;
        }
        partial += a.values()[static_cast<std::size_t>(q)] * x[static_cast<std::size_t>(p * w + l.col[k])];
      }
      if (l.base[static_cast<std::size_t>(p)] + st[r + 1] != at)
        v.fail("block " + std::to_string(p) + ": row " + std::to_string(r) + "'s end is not its start");
      y[static_cast<std::size_t>(r)] += partial;
    }
    if (at != l.base[static_cast<std::size_t>(p) + 1]) v.fail("block " + std::to_string(p) + " holds other entries");
  }
  const std::vector<double> unread(static_cast<std::size_t>(rows), std::nan(""));  // beta 0: never read
  const auto bound = row_bounds(a, 1.0, x, 0.0, unread, accumulation::wide, accumulation::wide);
  const auto e = compare_rows(y, plain_loop(a, 1.0, x, 0.0, unread), bound, "the plain loop");
  if (e.bad > 0) v.fail("the partials' sum: " + e.first);
  return v;
}

}  // namespace

BOOST_AUTO_TEST_SUITE(spmv_plan)

CPU_TEST_CASE(algorithm_names_round_trip) {
  auto all = sparse::concrete_spmv_algorithms();
  BOOST_TEST(all.size() == 11u);
  all.push_back(sparse::spmv_algorithm::automatic);
  for (auto a : all) BOOST_TEST((sparse::parse_spmv_algorithm(sparse::to_string(a)) == a));
  BOOST_TEST((sparse::parse_spmv_algorithm("auto") == sparse::spmv_algorithm::automatic));
  try {
    sparse::parse_spmv_algorithm("csr_vector");
    BOOST_ERROR("csr_vector accepted");
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()) ==
               "unknown SpMV algorithm 'csr_vector' (expected automatic, scalar, shared_cached, warp_per_row, vector, "
               "adaptive, block_per_row, merge, warp_stream, stencil, windowed or column_blocks)");
  }
}

CPU_TEST_CASE(row_stats_are_exact) {
  // Lengths 0, 3, 0, 40, 5000, 1: every counter is known.
  const auto a = from_lengths(6000, {0, 3, 0, 40, 5000, 1}, 61);
  const auto s = sparse::compute_row_stats(a.rows(), a.cols(), a.row_ptr().data());
  BOOST_TEST(s.rows == 6);
  BOOST_TEST(s.cols == 6000);
  BOOST_TEST(s.nnz == 5044);
  BOOST_TEST(s.min_length == 0);
  BOOST_TEST(s.max_length == 5000);
  BOOST_TEST(s.empty_rows == 2);
  BOOST_TEST(s.rows_over_32 == 2);
  BOOST_TEST(s.rows_over_4096 == 1);
  BOOST_TEST(s.nnz_in_rows_over_32 == 5040);
  BOOST_TEST(s.mean_length == 5044.0 / 6.0);
  const auto empty = sparse::compute_row_stats<int64_t>(0, 0, nullptr);
  BOOST_TEST(empty.nnz == 0);
}

CPU_TEST_CASE(automatic_choice_follows_the_documented_thresholds) {
  auto stats_of = [](const base_csr& a) { return sparse::compute_row_stats(a.rows(), a.cols(), a.row_ptr().data()); };
  auto choice = [&](const base_csr& a) { return sparse::choose_algorithm(stats_of(a)); };
  using sparse::spmv_algorithm;
  BOOST_TEST((choice(base_csr()) == spmv_algorithm::scalar));
  BOOST_TEST((choice(sparse::generate_laplace_2d<double, int64_t>(40)) == spmv_algorithm::scalar));
  BOOST_TEST((choice(sparse::generate_laplace_3d<double, int64_t>(20)) == spmv_algorithm::scalar));
  BOOST_TEST((choice(sparse::generate_random_k<double, int64_t>(5000, 5000, 2, 3)) == spmv_algorithm::vector));
  // Rows of 3 and 4 (a few duplicates merged: means just below 3 and 4): scalar, not vector.
  BOOST_TEST((choice(sparse::generate_random_k<double, int64_t>(5000, 5000, 3, 4)) == spmv_algorithm::scalar));
  BOOST_TEST((choice(sparse::generate_random_k<double, int64_t>(5000, 5000, 4, 5)) == spmv_algorithm::scalar));
  // The cut at 7.5 entries: rows of 7 (the 3D Laplacian's) scalar, rows of 8 (mean just below 8) vector.
  BOOST_TEST((choice(from_lengths(4000, std::vector<int64_t>(300, 7), 60)) == spmv_algorithm::scalar));
  BOOST_TEST((choice(sparse::generate_random_k<double, int64_t>(5000, 5000, 8, 6)) == spmv_algorithm::vector));
  BOOST_TEST((choice(from_lengths(100000, std::vector<int64_t>(20, 5000), 64)) == spmv_algorithm::adaptive));  // uniform, > 1024
  BOOST_TEST((choice(sparse::generate_power_law<double, int64_t>(40000, 40000, 3)) == spmv_algorithm::adaptive));
  // Launch-bound irregular matrices (<= 16,384 rows and 2^18 entries): one warp per row (from_lengths
  // below), ...
  BOOST_TEST((choice(sparse::generate_power_law<double, int64_t>(5000, 5000, 3)) == spmv_algorithm::merge));  // longest row 1,207
  BOOST_TEST((choice(sparse::generate_power_law<double, int64_t>(16385, 16385, 3)) == spmv_algorithm::adaptive));
  // ... unless a row exceeds 1,024 entries: block_per_row up to 2,048 rows, merge beyond.
  auto with_long_row = [](int64_t rows, int64_t longest) {
    std::vector<int64_t> lengths(static_cast<std::size_t>(rows), 4);
    lengths[static_cast<std::size_t>(rows / 2)] = longest;
    return from_lengths(rows, lengths, 65);
  };
  BOOST_TEST((choice(with_long_row(2048, 1024)) == spmv_algorithm::warp_per_row));
  BOOST_TEST((choice(with_long_row(2048, 1025)) == spmv_algorithm::block_per_row));
  BOOST_TEST((choice(with_long_row(2049, 1025)) == spmv_algorithm::merge));
  BOOST_TEST((choice(with_long_row(16000, 16000)) == spmv_algorithm::merge));
  // Uniform rows of 500: vector (block_per_row 128.1 us against 33.6 on an H200), of 900: block_per_row.
  BOOST_TEST((choice(from_lengths(4000, std::vector<int64_t>(300, 500), 62)) == spmv_algorithm::vector));
  BOOST_TEST((choice(from_lengths(4000, std::vector<int64_t>(300, 900), 62)) == spmv_algorithm::block_per_row));
  BOOST_TEST((choice(from_lengths(4000, std::vector<int64_t>(300, 48), 63)) == spmv_algorithm::vector));
  sparse::row_stats s;
  s.rows = 10;
  s.nnz = 50;
  for (const auto& [mean, width] : std::vector<std::pair<double, int>>{{5, 2}, {1, 2}, {15.99994, 4}, {48, 16}, {1000, 32}}) {
    s.mean_length = mean;  // 15.99994: random16
    BOOST_TEST(sparse::choose_vector_width(s) == width, "mean " << mean);
  }
  // The GPU case `vector_matches_the_plain_loop_and_cusparse` needs every width among the test matrices.
  std::set<int> widths;
  for (const auto& nm : matrices()) widths.insert(sparse::choose_vector_width(stats_of(nm.a)));
  BOOST_TEST((widths == std::set<int>{2, 4, 8, 16, 32}));
}

// An automatic stencil plan applies through scalar's kernel exactly where choose_algorithm calls the
// matrix launch-bound: at most 16,384 rows and 2^18 entries, each cut checked on both sides.
CPU_TEST_CASE(stencil_through_scalar_follows_the_launch_bound_cut) {
  sparse::row_stats s;
  s.cols = 16384;
  s.rows = 16384;
  s.nnz = std::int64_t{1} << 18;
  BOOST_TEST(d::automatic_stencil_applies_through_scalar(s));
  s.rows = 16385;
  BOOST_TEST(!d::automatic_stencil_applies_through_scalar(s));
  s.rows = 16384;
  s.nnz = (std::int64_t{1} << 18) + 1;
  BOOST_TEST(!d::automatic_stencil_applies_through_scalar(s));
  const auto tridiagonal = [](std::int64_t rows) {
    sparse::generate_params p;
    p.kind = sparse::matrix_class::banded;
    p.rows = rows;
    p.k = 1;
    const auto a = sparse::generate<double, std::int64_t>(p);
    return sparse::compute_row_stats(a.rows(), a.cols(), a.row_ptr().data());
  };
  BOOST_TEST(d::automatic_stencil_applies_through_scalar(tridiagonal(1000)));
  BOOST_TEST(!d::automatic_stencil_applies_through_scalar(tridiagonal(100000)));
}

// Column panels: every entry in exactly one panel, in its row's order, its column shifted by the panel's
// first column; the panels' widths add up to cols. Checked by putting the matrix back together.
template <class V, class I>
verdict check_column_panels(const sparse::host_csr<V, I>& a, const std::vector<sparse::host_csr<V, I>>& parts,
                            int panels) {
  verdict v;
  if (static_cast<int>(parts.size()) != panels) v.fail(std::to_string(parts.size()) + " panels");
  const int64_t width = parts.empty() ? 0 : parts[0].cols();
  int64_t cols = 0;
  for (const auto& p : parts) cols += p.cols();
  if (cols != a.cols()) v.fail("panel widths add up to " + std::to_string(cols));
  for (int64_t i = 0; i < a.rows() && v.bad == 0; ++i) {
    std::vector<std::pair<int64_t, V>> row;
    for (std::size_t k = 0; k < parts.size(); ++k) {
      const auto& p = parts[k];
      if (p.rows() != a.rows()) {
        v.fail("panel " + std::to_string(k) + " has " + std::to_string(p.rows()) + " rows");
        return v;
      }
      for (auto e = p.row_ptr()[i]; e < p.row_ptr()[i + 1]; ++e) {
        if (p.col_idx()[e] < 0 || p.col_idx()[e] >= p.cols()) v.fail("panel column out of range");
        row.emplace_back(static_cast<int64_t>(k) * width + p.col_idx()[e], p.values()[e]);
      }
    }
    const auto n = static_cast<std::size_t>(a.row_ptr()[i + 1] - a.row_ptr()[i]);
    if (row.size() != n) v.fail("row " + std::to_string(i) + ": " + std::to_string(row.size()) + " entries, not " + std::to_string(n));
    for (std::size_t e = 0; e < std::min(n, row.size()); ++e) {
      const auto q = static_cast<std::size_t>(a.row_ptr()[i]) + e;
      if (row[e].first != a.col_idx()[q] || std::memcmp(&row[e].second, &a.values()[q], sizeof(V)) != 0)
        v.fail("row " + std::to_string(i) + " entry " + std::to_string(e) + " differs");
    }
  }
  return v;
}

template <class V, class I>
std::vector<sparse::host_csr<V, I>> split(const sparse::host_csr<V, I>& a, int panels) {
  return d::split_column_panels<V, I>(a.rows(), a.cols(), a.row_ptr().data(), a.col_idx().data(), a.values().data(),
                                      panels);
}

// 1-5 panels on a matrix whose columns do not divide evenly and which has empty rows, in both index
// widths; a panel left empty; and the check fails on a split with a changed value, a moved column or a
// dropped entry.
CPU_TEST_CASE(column_panels_hold_every_entry_once) {
  std::vector<int64_t> lengths(300, 7);
  lengths[0] = lengths[150] = lengths[299] = 0;
  const auto a = from_lengths(1001, lengths, 91);
  for (int panels = 1; panels <= 5; ++panels) {
    const auto v = check_column_panels(a, split(a, panels), panels);
    BOOST_TEST(v.bad == 0, panels << " panels: " << v.first);
    const auto af = a.cast<float, int32_t>();
    const auto f = check_column_panels(af, split(af, panels), panels);
    BOOST_TEST(f.bad == 0, panels << " panels (float, int32): " << f.first);
  }
  // Columns only in the first 100 of 1000: 3 panels of 334, 334, 332 columns, the last two empty.
  const auto narrow = from_lengths(100, std::vector<int64_t>(50, 3), 92);
  const auto parts = d::split_column_panels<double, int64_t>(narrow.rows(), 1000, narrow.row_ptr().data(),
                                                             narrow.col_idx().data(), narrow.values().data(), 3);
  BOOST_TEST(parts[0].cols() == 334);
  BOOST_TEST(parts[2].cols() == 332);
  BOOST_TEST(parts[0].nnz() == narrow.nnz());
  BOOST_TEST(parts[1].nnz() == 0);
  BOOST_TEST(parts[2].nnz() == 0);
  auto changed = split(a, 2);
  changed[1].values()[3] += 1.0;
  BOOST_TEST(check_column_panels(a, changed, 2).bad > 0);
  auto moved = split(a, 2);
  moved[0].col_idx()[5] = moved[0].col_idx()[5] == 0 ? 1 : 0;
  BOOST_TEST(check_column_panels(a, moved, 2).bad > 0);
  auto dropped = split(a, 2);
  for (std::size_t r = 10; r < dropped[1].row_ptr().size(); ++r) dropped[1].row_ptr()[r] -= 1;  // row 9 loses its last
  BOOST_TEST(check_column_panels(a, dropped, 2).bad > 0);
}

// Two panels where the plan is adaptive, x lies in (L2 / 2, L2], at least 2^22 entries, rows of at least
// 3.5 on average; each cut checked on both sides.
CPU_TEST_CASE(column_panel_rule_follows_the_documented_cuts) {
  using sparse::spmv_algorithm;
  const std::int64_t l2 = 60 << 20;
  sparse::row_stats s;
  s.rows = 10000000;
  s.cols = 10000000;  // 40 MB of float
  s.nnz = 40000000;
  s.mean_length = 4.0;
  BOOST_TEST(d::automatic_column_panels(s, spmv_algorithm::adaptive, 4, l2) == 2);
  BOOST_TEST(d::automatic_column_panels(s, spmv_algorithm::scalar, 4, l2) == 1);
  BOOST_TEST(d::automatic_column_panels(s, spmv_algorithm::adaptive, 8, l2) == 1);  // 80 MB of double: beyond L2
  s.cols = l2 / 8;  // exactly half the L2
  BOOST_TEST(d::automatic_column_panels(s, spmv_algorithm::adaptive, 4, l2) == 1);
  s.cols = l2 / 8 + 1;
  BOOST_TEST(d::automatic_column_panels(s, spmv_algorithm::adaptive, 4, l2) == 2);
  s.cols = l2 / 4;  // all of it
  BOOST_TEST(d::automatic_column_panels(s, spmv_algorithm::adaptive, 4, l2) == 2);
  s.cols = l2 / 4 + 1;
  BOOST_TEST(d::automatic_column_panels(s, spmv_algorithm::adaptive, 4, l2) == 1);
  s.cols = 10000000;
  s.nnz = (std::int64_t{1} << 22) - 1;
  BOOST_TEST(d::automatic_column_panels(s, spmv_algorithm::adaptive, 4, l2) == 1);
  s.nnz = std::int64_t{1} << 22;
  BOOST_TEST(d::automatic_column_panels(s, spmv_algorithm::adaptive, 4, l2) == 2);
  s.mean_length = 3.49;
  BOOST_TEST(d::automatic_column_panels(s, spmv_algorithm::adaptive, 4, l2) == 1);
}

// automatic's column sample: only for scalar's choice on at least 2^22 entries with x beyond 16 MiB, and
// adaptive from half the sampled entries far from the diagonal.
CPU_TEST_CASE(column_spread_sample_follows_the_documented_rule) {
  using sparse::spmv_algorithm;
  sparse::row_stats r4;
  r4.rows = r4.cols = 10000000;
  r4.nnz = 40000000;
  r4.max_length = 8;
  BOOST_TEST(sparse::samples_column_spread(r4, spmv_algorithm::scalar, sizeof(float)));
  BOOST_TEST(!sparse::samples_column_spread(r4, spmv_algorithm::vector, sizeof(float)));
  sparse::row_stats narrow = r4;
  narrow.cols = 4194304;  // 16 MiB of float x: not beyond
  BOOST_TEST(!sparse::samples_column_spread(narrow, spmv_algorithm::scalar, sizeof(float)));
  BOOST_TEST(sparse::samples_column_spread(narrow, spmv_algorithm::scalar, sizeof(double)));
  sparse::row_stats few = r4;
  few.nnz = (int64_t{1} << 22) - 1;
  BOOST_TEST(!sparse::samples_column_spread(few, spmv_algorithm::scalar, sizeof(float)));
  BOOST_TEST(sparse::scattered_columns_take_adaptive(0.5));
  BOOST_TEST(!sparse::scattered_columns_take_adaptive(0.49));
}

// automatic's windowed rule: random16 in float and random1000 reuse x's sectors enough on 132 SMs;
// random16 in double, random2 (too many columns), small matrices, rows beyond the slots and x under
// 1 MiB do not.
CPU_TEST_CASE(windowed_pays_follows_the_documented_rule) {
  sparse::row_stats r16;
  r16.rows = r16.cols = 2000000;
  r16.nnz = 32000000;
  r16.max_length = 30;
  BOOST_TEST(sparse::windowed_pays(r16, sizeof(float), 132));
  BOOST_TEST(!sparse::windowed_pays(r16, sizeof(double), 132));
  sparse::row_stats r1000 = r16;
  r1000.rows = 20000;
  r1000.nnz = 20000000;
  r1000.max_length = 1000;
  BOOST_TEST(sparse::windowed_pays(r1000, sizeof(float), 132));
  r1000.max_length = 2049;
  BOOST_TEST(!sparse::windowed_pays(r1000, sizeof(float), 132));
  sparse::row_stats r2 = r16;
  r2.rows = r2.cols = 8000000;
  r2.nnz = 16000000;
  BOOST_TEST(!sparse::windowed_pays(r2, sizeof(float), 132));
  sparse::row_stats small = r16;
  small.rows = small.cols = 20000;
  small.nnz = 320000;
  BOOST_TEST(!sparse::windowed_pays(small, sizeof(float), 1));  // below 2^22 entries
  // x of at least 1 MiB: 2^18 float columns qualify, one fewer does not (blockdiag_b256_100k's 400 KB).
  sparse::row_stats narrow = r16;
  narrow.cols = 1 << 18;
  BOOST_TEST(sparse::windowed_pays(narrow, sizeof(float), 132));
  narrow.cols = (1 << 18) - 1;
  BOOST_TEST(!sparse::windowed_pays(narrow, sizeof(float), 132));
  narrow.cols = 100000;
  narrow.rows = 100000;
  narrow.nnz = 25600000;
  narrow.max_length = 256;
  BOOST_TEST(!sparse::windowed_pays(narrow, sizeof(float), 132));
}

// automatic's column_blocks rule on 132 SMs: random1000 (20k rows of 1,000 over 2M columns) pays; rows
// of 527 on average (4 x 132 = 528 needed), fewer than 2^22 entries, or an x under 1 MiB do not.
CPU_TEST_CASE(column_blocks_pays_follows_the_documented_rule) {
  sparse::row_stats r;
  r.rows = 20000;
  r.cols = 2000000;
  r.nnz = 20000000;
  r.mean_length = 1000;
  r.max_length = 1000;
  BOOST_TEST(sparse::column_blocks_pays(r, sizeof(float), 132));
  BOOST_TEST(sparse::column_blocks_pays(r, sizeof(double), 132));
  BOOST_TEST(!sparse::column_blocks_pays(r, sizeof(float), 0));
  sparse::row_stats shorter = r;
  shorter.mean_length = 528;
  BOOST_TEST(sparse::column_blocks_pays(shorter, sizeof(float), 132));
  shorter.mean_length = 527.9;
  BOOST_TEST(!sparse::column_blocks_pays(shorter, sizeof(float), 132));
  sparse::row_stats small = r;
  small.nnz = (int64_t{1} << 22) - 1;
  BOOST_TEST(!sparse::column_blocks_pays(small, sizeof(float), 132));
  sparse::row_stats narrow = r;
  narrow.cols = 1 << 18;  // 1 MiB of float x: pays; one column fewer does not
  BOOST_TEST(sparse::column_blocks_pays(narrow, sizeof(float), 132));
  narrow.cols = (1 << 18) - 1;
  BOOST_TEST(!sparse::column_blocks_pays(narrow, sizeof(float), 132));
  BOOST_TEST(sparse::column_blocks_pays(narrow, sizeof(double), 132));
  // Only for automatic's uniform-row choices.
  BOOST_TEST(d::automatic_tries_column_blocks(r, sparse::spmv_algorithm::block_per_row, sizeof(float), 132));
  BOOST_TEST(d::automatic_tries_column_blocks(r, sparse::spmv_algorithm::vector, sizeof(float), 132));
  BOOST_TEST(!d::automatic_tries_column_blocks(r, sparse::spmv_algorithm::adaptive, sizeof(float), 132));
}

// Where column_blocks applies: ranges of at most 65,536 columns, x's slice within the block's shared
// memory, at most 1 GiB of row starts and partials; each refusal names its reason.
CPU_TEST_CASE(column_blocks_refuses_what_it_cannot_hold) {
  const int64_t shared = 227 * 1024;  // an H100's or H200's opt-in limit
  BOOST_TEST(d::column_blocks_why_not(20000, 2000000, 20000000, sizeof(float), 132, shared).empty());
  BOOST_TEST(d::column_blocks_why_not(1, 132 * 65536, 1, sizeof(float), 132, 1 << 20).empty());
  const std::string wide = d::column_blocks_why_not(1, 132 * 65536 + 1, 1, sizeof(float), 132, 1 << 20);
  BOOST_TEST(wide.find("blocks of 65537 (at most 65536") != std::string::npos, wide);
  const std::string big_x = d::column_blocks_why_not(20000, 8000000, 20000000, sizeof(float), 132, shared);
  BOOST_TEST(big_x.find("bytes of shared memory") != std::string::npos, big_x);
  BOOST_TEST(d::column_blocks_why_not(20000, 4000000, 20000000, sizeof(double), 132, shared).find("shared memory") !=
             std::string::npos);
  const std::string tall = d::column_blocks_why_not(2000000, 2000000, 32000000, sizeof(float), 132, shared);
  BOOST_TEST(tall.find("MB of row starts and partials") != std::string::npos, tall);
  BOOST_TEST(d::column_blocks_why_not(10, 10, 10, sizeof(float), 0, shared).find("no column blocks") != std::string::npos);
}

// The column-block layout holds every entry once, in its range, row after row in column order, for
// several block counts (more blocks than columns too), and its CPU twin sums within the oracle's bound.
CPU_TEST_CASE(column_blocks_layout_holds_every_entry_once_in_range_order) {
  std::uint64_t stream = 9100;
  for (const auto& nm : matrices()) {
    const auto& a = nm.a;
    const auto x = test::random_vector<double>(a.cols(), -1.0, 1.0, ++stream);
    for (int blocks : {1, 3, 132}) {
      if (a.rows() * blocks > (int64_t{1} << 24)) continue;  // 1M rows in 132 blocks: 0.5 GB of row starts
      // Ranges wider than 16-bit offsets are refused before a layout is built (column_blocks_why_not).
      if ((a.cols() + blocks - 1) / blocks > d::column_blocks_max_width) continue;
      const auto l = d::build_column_blocks_layout<int64_t>(a.rows(), a.cols(), a.row_ptr().data(), a.col_idx().data(), blocks);
      const auto v = check_column_blocks_layout(a, l, blocks, x);
      BOOST_TEST(v.bad == 0, nm.name << ", " << blocks << " blocks: " << v.bad << " problems; first: " << v.first);
    }
  }
  // The checker rejects a moved row start, a wrong column offset and a dropped entry.
  const auto a = sparse::generate_random_k<double, int64_t>(300, 5000, 40, 92);
  const auto x = test::random_vector<double>(a.cols(), -1.0, 1.0, 93);
  const auto good = d::build_column_blocks_layout<int64_t>(a.rows(), a.cols(), a.row_ptr().data(), a.col_idx().data(), 7);
  BOOST_TEST(check_column_blocks_layout(a, good, 7, x).bad == 0);
  auto moved = good;
  moved.start[static_cast<std::size_t>(2 * (a.rows() + 1) + 150)] += 1;
  BOOST_TEST(check_column_blocks_layout(a, moved, 7, x).bad > 0, "a moved row start");
  auto offset = good;
  offset.col[1000] = static_cast<std::uint16_t>(offset.col[1000] + 1);
  BOOST_TEST(check_column_blocks_layout(a, offset, 7, x).bad > 0, "a wrong column offset");
  auto dropped = good;
  dropped.col.pop_back();
  dropped.source.pop_back();
  BOOST_TEST(check_column_blocks_layout(a, dropped, 7, x).bad > 0, "a dropped entry");
}

CPU_TEST_CASE(adaptive_partition_covers_every_row_once) {
  std::set<int> lanes_used;
  for (const auto& nm : matrices()) {
    const auto p = d::build_adaptive_partition(nm.a.rows(), nm.a.row_ptr().data());
    const auto v = check_adaptive_partition(nm.a, p);
    BOOST_TEST(v.bad == 0, nm.name << ": " << v.bad << " problems; first: " << v.first);
    for (const auto& t : p.tiles)
      if (t.kind == d::tile_stream) lanes_used.insert(t.lanes);
  }
  // The GPU cases run these matrices: every reduce-phase width of the stream tiles is exercised.
  BOOST_TEST((lanes_used == std::set<int>{1, 16, 32}));
}

CPU_TEST_CASE(merge_partition_tiles_the_merge_path) {
  for (const auto& nm : matrices()) {
    const auto v = check_merge_partition(nm.a, d::build_merge_partition(nm.a.rows(), nm.a.row_ptr().data()));
    BOOST_TEST(v.bad == 0, nm.name << ": " << v.bad << " problems; first: " << v.first);
  }
}

// The stencil table decodes to exactly the matrix's columns wherever it applies, applies exactly where
// an independent census says it should, and does not depend on the fetch piece size.
CPU_TEST_CASE(stencil_table_reproduces_every_column_where_it_applies) {
  int usable = 0;
  std::set<bool> unrolled;  // both forms of the kernel (rows <= 8 entries, longer) must meet these matrices
  for (const auto& nm : matrices()) {
    const auto census = census_of(nm.a);
    const auto t = host_stencil_table(nm.a);
    BOOST_TEST(t.usable() == census.qualifies(),
               nm.name << ": stencil " << (t.usable() ? "applies" : "refused: " + t.why_not) << ", expected the opposite");
    for (std::int64_t chunk : {1, 7, 100}) {  // pieces of one row up to many rows: the same table
      const auto u = host_stencil_table(nm.a, chunk);
      BOOST_TEST((u.usable() == t.usable() && u.patterns == t.patterns && u.words == t.words &&
                  u.pattern_of_row == t.pattern_of_row),
                 nm.name << ": pieces of " << chunk << " entries give a different table");
    }
    if (!t.usable()) continue;
    ++usable;
    unrolled.insert(census.longest <= d::stencil_unrolled_row);
    BOOST_TEST(t.patterns == static_cast<int32_t>(census.patterns.size()));
    BOOST_TEST(t.words.size() == static_cast<std::size_t>(census.words));
    const auto v = check_stencil_table(nm.a, t);
    BOOST_TEST(v.bad == 0, nm.name << ": " << v.bad << " rows decode wrongly; first: " << v.first);
  }
  BOOST_TEST(usable >= 14, "stencil applies to " << usable << " test matrices only");
  BOOST_TEST(unrolled.size() == 2u, "the stencil matrices need rows of <= 8 and of more entries");
}

// The unrolled kernel's packed row starts: every stencil matrix of rows <= 8 entries packs (31 x 8 = 248
// entries into a group at most) and decodes to row_ptr and the pattern bytes; longer rows pack exactly
// where an independent scan finds every start within a byte of its group's.
CPU_TEST_CASE(packed_stencil_row_starts_decode_to_row_ptr) {
  int packed = 0, short_rows = 0;
  for (const auto& nm : matrices()) {
    const auto t = host_stencil_table(nm.a);
    if (!t.usable()) continue;
    d::stencil_row_starts s;
    const bool ok = d::pack_stencil_row_starts<int64_t>(nm.a.rows(), nm.a.row_ptr().data(), t.pattern_of_row, s);
    BOOST_TEST(ok == starts_fit_a_byte(nm.a), nm.name << ": packed " << ok << ", expected the opposite");
    if (longest_row(nm.a) <= d::stencil_unrolled_row) {
      ++short_rows;
      BOOST_TEST(ok, nm.name << ": rows of <= 8 entries did not pack");
    }
    if (!ok) continue;
    ++packed;
    const auto v = check_packed_starts(nm.a, t, s);
    BOOST_TEST(v.bad == 0, nm.name << ": " << v.bad << " rows decode wrongly; first: " << v.first);
  }
  BOOST_TEST(short_rows >= 8, "only " << short_rows << " stencil test matrices have rows of <= 8 entries");
  BOOST_TEST(packed > short_rows, "no test matrix of longer rows packs: that side went untested");
  const auto nine = from_lengths(70, std::vector<int64_t>(70, 9), 73);  // row 29 starts 261 into its group
  const auto nine_t = host_stencil_table(nine);
  BOOST_TEST_REQUIRE(nine_t.usable());
  d::stencil_row_starts s;
  BOOST_TEST(!d::pack_stencil_row_starts<int64_t>(nine.rows(), nine.row_ptr().data(), nine_t.pattern_of_row, s));
}

CPU_TEST_CASE(stencil_refusals_name_their_reason) {
  BOOST_TEST(host_stencil_table(from_lengths(100, {3, 33, 2}, 71)).why_not.find("row 1 has 33 entries") != std::string::npos);
  std::vector<int64_t> ptr{0}, cols;
  for (int64_t i = 0; i < 300; ++i) {  // 300 rows, one entry each, every one at a new offset
    cols.push_back((2 * i) % 300);     // offset i below row 150, i - 300 from there: 300 distinct
    ptr.push_back(i + 1);
  }
  const auto many = host_stencil_table(base_csr(300, 300, ptr, cols, std::vector<double>(300, 1.0)));
  BOOST_TEST(many.why_not.find("more than 256 distinct") != std::string::npos, many.why_not);
  const auto wide = host_stencil_table(from_lengths(4000, std::vector<int64_t>(40, 32), 72));  // 40 patterns x 32 offsets
  BOOST_TEST(wide.why_not.find("table words") != std::string::npos, wide.why_not);
}

// The windowed layout, and the CPU twin of the windowed kernel's arithmetic, for several window widths,
// slot caps and warp counts on every test matrix the layout takes; the others are refused with the reason.
CPU_TEST_CASE(windowed_layout_holds_every_entry_once_in_slot_order) {
  struct shape {
    int window, max_slots;
    std::int64_t warps;
  };
  int built = 0, refused = 0, multi_slot = 0;
  std::int64_t padded = 0;
  for (const auto& nm : matrices()) {
    const auto& a = nm.a;
    const auto x = test::random_vector<double>(a.cols(), -1.0, 1.0, 91);
    for (const shape sh : {shape{4096, 1023, 64}, shape{1, 64, 7}, shape{4, 1023, 1}}) {
      const auto w = d::build_windowed_layout<int64_t>(a.rows(), a.cols(), a.row_ptr().data(), a.col_idx().data(), sh.warps,
                                                       sh.window, sh.max_slots);
      const std::string ctx = nm.name + " window " + std::to_string(sh.window) + " slots " + std::to_string(sh.max_slots);
      BOOST_TEST(w.usable() == windowed_applies(a), ctx << ": " << (w.usable() ? "built" : w.why_not));
      if (!w.usable()) {
        ++refused;
        BOOST_TEST(w.why_not.find("entries (at most 2048)") != std::string::npos, ctx << ": " << w.why_not);
        continue;
      }
      ++built;
      padded += w.padding;
      multi_slot += !w.row_slot.empty();
      const auto v = check_windowed_layout(a, w, sh.max_slots, x);
      BOOST_TEST(v.bad == 0, ctx << ": " << v.bad << " problems; first: " << v.first);
    }
  }
  BOOST_TEST(built >= 3 * 20);
  BOOST_TEST(refused > 0, "no test matrix has rows beyond the slots: the refusal went untested");
  BOOST_TEST(multi_slot > 0, "no test matrix has rows of several slots");
  BOOST_TEST(padded > 0, "no layout needed padding: the padding path went untested");
  const std::vector<int64_t> ptr = {0, 1};
  const std::vector<int64_t> cols = {5};
  const auto wide = d::build_windowed_layout<int64_t>(1, d::windowed_max_cols + 1, ptr.data(), cols.data(), 1, 4096);
  BOOST_TEST(wide.why_not.find("4194305 columns (at most 4194304") != std::string::npos, wide.why_not);
}

// A check that cannot fail is a defect: each white-box checker above rejects a broken structure.
CPU_TEST_CASE(white_box_checkers_reject_broken_structures) {
  const auto& ladder = matrix("row_length_ladder").a;  // every tile kind, split rows, rows across merge blocks
  const auto p = d::build_adaptive_partition(ladder.rows(), ladder.row_ptr().data());
  BOOST_TEST(check_adaptive_partition(ladder, p).bad == 0);
  auto bad_p = p;
  bad_p.tiles.pop_back();
  BOOST_TEST(check_adaptive_partition(ladder, bad_p).bad > 0, "a tile dropped");
  bad_p = p;
  bad_p.tiles.push_back(p.tiles.front());
  BOOST_TEST(check_adaptive_partition(ladder, bad_p).bad > 0, "a tile repeated");
  const auto m = d::build_merge_partition(ladder.rows(), ladder.row_ptr().data());
  BOOST_TEST_REQUIRE((m.blocks.size() >= 3 && !m.split_rows.empty()));
  BOOST_TEST(check_merge_partition(ladder, m).bad == 0);
  auto bad_m = m;
  bad_m.split_rows.pop_back();
  BOOST_TEST(check_merge_partition(ladder, bad_m).bad > 0, "a crossing row unlisted");
  bad_m = m;
  bad_m.blocks[1].nz += 1;
  BOOST_TEST(check_merge_partition(ladder, bad_m).bad > 0, "a block coordinate moved");
  const auto& laplace = matrix("laplace2d_33").a;  // 9 patterns
  const auto t = host_stencil_table(laplace);
  BOOST_TEST_REQUIRE((t.usable() && t.patterns > 1));
  BOOST_TEST(check_stencil_table(laplace, t).bad == 0);
  auto bad_t = t;
  bad_t.pattern_of_row[0] = static_cast<std::uint8_t>((t.pattern_of_row[0] + 1) % t.patterns);
  BOOST_TEST(check_stencil_table(laplace, bad_t).bad == 1, "one row given another pattern");
  d::stencil_row_starts starts;
  BOOST_TEST_REQUIRE(d::pack_stencil_row_starts<int64_t>(laplace.rows(), laplace.row_ptr().data(), t.pattern_of_row, starts));
  BOOST_TEST(check_packed_starts(laplace, t, starts).bad == 0);
  auto bad_s = starts;
  bad_s.packed_row[40] = static_cast<std::uint16_t>(bad_s.packed_row[40] + 0x100u);  // row 40 one entry late
  BOOST_TEST(check_packed_starts(laplace, t, bad_s).bad == 1, "one row's start moved");
  bad_s = starts;
  bad_s.packed_row[41] ^= 1u;  // another pattern
  BOOST_TEST(check_packed_starts(laplace, t, bad_s).bad == 1, "one row's pattern byte changed");
  bad_s = starts;
  bad_s.group_start[2] += 1;  // rows 64..95
  BOOST_TEST(check_packed_starts(laplace, t, bad_s).bad == 32, "a group's base moved");
  const auto& long_rows = matrix("random_65_x_2000_k1000").a;  // 32 slots per row
  const auto x = test::random_vector<double>(long_rows.cols(), -1.0, 1.0, 92);
  const auto w = d::build_windowed_layout<int64_t>(long_rows.rows(), long_rows.cols(), long_rows.row_ptr().data(),
                                                   long_rows.col_idx().data(), 4, 64, 1023);
  BOOST_TEST_REQUIRE(w.usable());
  BOOST_TEST(check_windowed_layout(long_rows, w, 1023, x).bad == 0);
  auto bad_w = w;
  const auto k = static_cast<std::size_t>(std::find_if(w.source.begin(), w.source.end(), [](int64_t s) { return s >= 0; }) - w.source.begin());
  bad_w.packed[k] ^= 1u;  // another column
  BOOST_TEST(check_windowed_layout(long_rows, bad_w, 1023, x).bad > 0, "a word decoding to another column");
  bad_w = w;
  bad_w.packed.resize(w.packed.size() - 32);
  bad_w.source.resize(w.source.size() - 32);
  bad_w.warp_begin.back() -= 32;
  BOOST_TEST(check_windowed_layout(long_rows, bad_w, 1023, x).bad > 0, "the last group dropped");
}

BOOST_AUTO_TEST_SUITE_END()
