// The stencil table: each row's column-offset pattern, interned into at most 256 patterns that fit the
// 1,024-word table a block keeps in shared memory (host side, once per plan). No CUDA syntax: the kernel
// is in spmv_row_kernels.cuh.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <string>
#include <vector>

#include "spmv_stencil_plan.hpp"

namespace sparse::detail {
namespace {

/// Why a matrix with a row longer than stencil_max_row does not qualify (row_ptr alone says so: no
/// column is fetched); empty when every row fits.
template <class Index>
std::string long_row_refusal(std::int64_t rows, const Index* row_ptr) {
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t length = static_cast<std::int64_t>(row_ptr[i + 1]) - row_ptr[i];
    if (length > stencil_max_row)
      return "row " + std::to_string(i) + " has " + std::to_string(length) + " entries (at most " +
             std::to_string(stencil_max_row) + ")";
  }
  return {};
}

/// The distinct offset patterns in order of first appearance, with the table's limits.
class pattern_set {
public:
  /// The id of row `row`'s pattern `offsets`, added if new; -1 (and `why_not`) when it would overflow
  /// the table. Most rows repeat the previous row's pattern: that is checked before the map.
  int id_of(const std::vector<std::int32_t>& offsets, std::int64_t row, std::string& why_not) {
    if (last_ >= 0 && *by_id_[static_cast<std::size_t>(last_)] == offsets) return last_;
    auto it = ids_.find(offsets);
    if (it == ids_.end()) {
      if (static_cast<int>(by_id_.size()) == stencil_max_patterns) {
        why_not = "more than " + std::to_string(stencil_max_patterns) + " distinct column-offset patterns (row " +
                  std::to_string(row) + " starts one more)";
        return -1;
      }
      total_offsets_ += static_cast<std::int64_t>(offsets.size());
      if (static_cast<std::int64_t>(by_id_.size()) + 2 + total_offsets_ > stencil_table_words) {
        why_not = "the patterns need more than " + std::to_string(stencil_table_words) + " table words (row " +
                  std::to_string(row) + ")";
        return -1;
      }
      it = ids_.emplace(offsets, static_cast<int>(by_id_.size())).first;
      by_id_.push_back(&it->first);
    }
    last_ = it->second;
    return last_;
  }

  std::int32_t count() const { return static_cast<std::int32_t>(by_id_.size()); }

  /// stencil_table::words: each pattern's start, the offset count, then every pattern's offsets.
  std::vector<std::int32_t> words() const {
    std::vector<std::int32_t> w(by_id_.size() + 1, 0);
    for (std::size_t p = 0; p < by_id_.size(); ++p) {
      w[p] = static_cast<std::int32_t>(w.size() - (by_id_.size() + 1));
      w.insert(w.end(), by_id_[p]->begin(), by_id_[p]->end());
    }
    w[by_id_.size()] = static_cast<std::int32_t>(total_offsets_);
    return w;
  }

private:
  std::map<std::vector<std::int32_t>, int> ids_;
  std::vector<const std::vector<std::int32_t>*> by_id_;  // keys of ids_ in id order
  std::int64_t total_offsets_ = 0;
  int last_ = -1;
};

/// Row i's offsets (column - i) from its columns `cols`; false (and `why_not`) for an offset beyond int32.
template <class Index>
bool row_offsets(const Index* cols, std::int64_t count, std::int64_t i, std::vector<std::int32_t>& offsets,
                 std::string& why_not) {
  offsets.clear();
  for (std::int64_t k = 0; k < count; ++k) {
    const std::int64_t off = static_cast<std::int64_t>(cols[k]) - i;
    if (off < std::numeric_limits<std::int32_t>::min() || off > std::numeric_limits<std::int32_t>::max()) {
      why_not = "row " + std::to_string(i) + " has a column more than 2^31 - 1 away from the row index";
      return false;
    }
    offsets.push_back(static_cast<std::int32_t>(off));
  }
  return true;
}

}  // namespace

template <class Index>
stencil_table build_stencil_table(std::int64_t rows, const Index* row_ptr, const fetch_columns<Index>& fetch,
                                  std::int64_t chunk_entries) {
  stencil_table t;
  t.why_not = long_row_refusal(rows, row_ptr);
  if (!t.usable()) return t;
  t.pattern_of_row.resize(static_cast<std::size_t>(rows));
  pattern_set patterns;
  std::vector<std::int32_t> offsets;
  std::vector<Index> cols;
  chunk_entries = std::max<std::int64_t>(chunk_entries, stencil_max_row);
  for (std::int64_t row = 0; row < rows;) {
    // Rows [row, end): as many whole rows as fit in one piece.
    const std::int64_t first = row_ptr[row];
    std::int64_t end = row + 1;
    while (end < rows && static_cast<std::int64_t>(row_ptr[end + 1]) - first <= chunk_entries) ++end;
    cols.resize(static_cast<std::size_t>(static_cast<std::int64_t>(row_ptr[end]) - first));
    if (!cols.empty()) fetch(first, static_cast<std::int64_t>(cols.size()), cols.data());
    for (std::int64_t i = row; i < end; ++i) {
      const Index* row_cols = cols.data() + (static_cast<std::int64_t>(row_ptr[i]) - first);
      if (!row_offsets(row_cols, static_cast<std::int64_t>(row_ptr[i + 1]) - row_ptr[i], i, offsets, t.why_not))
        return t;
      const int id = patterns.id_of(offsets, i, t.why_not);
      if (id < 0) return t;
      t.pattern_of_row[static_cast<std::size_t>(i)] = static_cast<std::uint8_t>(id);
    }
    row = end;
  }
  t.patterns = patterns.count();
  t.words = patterns.words();
  return t;
}

template <class Index>
bool pack_stencil_row_starts(std::int64_t rows, const Index* row_ptr, const std::vector<std::uint8_t>& pattern_of_row,
                             stencil_row_starts& out) {
  out.packed_row.assign(static_cast<std::size_t>(rows), 0);
  out.group_start.assign(static_cast<std::size_t>((rows + stencil_row_group - 1) / stencil_row_group), 0);
  for (std::int64_t i = 0; i < rows; ++i) {
    const std::int64_t group_first = row_ptr[i - i % stencil_row_group];
    const std::int64_t into = static_cast<std::int64_t>(row_ptr[i]) - group_first;
    if (into > 255) return false;
    if (i % stencil_row_group == 0) out.group_start[static_cast<std::size_t>(i / stencil_row_group)] = group_first;
    out.packed_row[static_cast<std::size_t>(i)] =
        static_cast<std::uint16_t>(pattern_of_row[static_cast<std::size_t>(i)] | (into << 8));
  }
  return true;
}

std::string details_of(const stencil_state& s) {
  return " (" + std::to_string(s.patterns) + " row patterns, " + std::to_string(s.table.size() - s.patterns - 1) +
         " offsets" +
         (s.unrolled ? ", " + std::to_string(stencil_unrolled_row) + " loads in flight, packed row starts" : "") +
         (s.plain_through_scalar ? "; spmv through scalar's kernel" : "") + ")";
}

template stencil_table build_stencil_table<std::int32_t>(std::int64_t, const std::int32_t*,
                                                         const fetch_columns<std::int32_t>&, std::int64_t);
template stencil_table build_stencil_table<std::int64_t>(std::int64_t, const std::int64_t*,
                                                         const fetch_columns<std::int64_t>&, std::int64_t);
template bool pack_stencil_row_starts<std::int32_t>(std::int64_t, const std::int32_t*, const std::vector<std::uint8_t>&,
                                                    stencil_row_starts&);
template bool pack_stencil_row_starts<std::int64_t>(std::int64_t, const std::int64_t*, const std::vector<std::uint8_t>&,
                                                    stencil_row_starts&);

}  // namespace sparse::detail
