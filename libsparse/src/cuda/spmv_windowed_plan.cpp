// The windowed layout (host side, once per plan: the format is described in spmv_windowed_plan.hpp) and
// its upload. No CUDA syntax beyond the runtime's attribute query: the kernel is spmv_windowed.cuh.
#include <algorithm>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "gpukit/cuda_launch.hpp"
#include "instantiate.hpp"
#include "spmv_windowed_plan.hpp"

namespace sparse::detail {
namespace {

template <class Index>
std::int64_t row_length(const Index* row_ptr, std::int64_t r) {
  return static_cast<std::int64_t>(row_ptr[r + 1]) - row_ptr[r];
}

/// A row of `length` entries takes ceil(length / 32) slots, at least one.
std::int64_t slots_for(std::int64_t length) {
  return std::max<std::int64_t>(1, (length + windowed_slot_entries - 1) / windowed_slot_entries);
}

/// Why the layout cannot hold the matrix (columns beyond the packed 22 bits, rows beyond 64 slots);
/// empty when it can.
template <class Index>
std::string windowed_refusal(std::int64_t rows, std::int64_t cols, const Index* row_ptr) {
  if (cols > windowed_max_cols)
    return std::to_string(cols) + " columns (at most " + std::to_string(windowed_max_cols) +
           ": an entry packs its column in 22 bits)";
  constexpr std::int64_t longest = std::int64_t{windowed_slot_entries} * windowed_max_row_slots;
  for (std::int64_t r = 0; r < rows; ++r)
    if (row_length(row_ptr, r) > longest)
      return "row " + std::to_string(r) + " has " + std::to_string(row_length(row_ptr, r)) + " entries (at most " +
             std::to_string(longest) + ")";
  return {};
}

/// rows + 1 entries: each row's first slot, then the slot count.
template <class Index>
std::vector<std::int64_t> first_slots(std::int64_t rows, const Index* row_ptr) {
  std::vector<std::int64_t> row_slot(static_cast<std::size_t>(rows) + 1, 0);
  for (std::int64_t r = 0; r < rows; ++r)
    row_slot[static_cast<std::size_t>(r) + 1] = row_slot[static_cast<std::size_t>(r)] + slots_for(row_length(row_ptr, r));
  return row_slot;
}

/// Row ranges of whole rows, one per warp (warps + 1 entries): a warp closes once it holds its share of
/// entries + rows, or before the next row's slots would exceed max_warp_slots.
template <class Index>
std::vector<std::int64_t> warp_row_ranges(std::int64_t rows, std::int64_t nnz, const Index* row_ptr,
                                          const std::vector<std::int64_t>& row_slot, std::int64_t target_warps,
                                          int max_warp_slots) {
  target_warps = std::max<std::int64_t>(1, target_warps);
  const std::int64_t share = std::max<std::int64_t>(1, (nnz + rows + target_warps - 1) / target_warps);
  std::vector<std::int64_t> row0{0};
  for (std::int64_t r = 0, weight = 0; r < rows; ++r) {
    const std::int64_t first = row0.back();
    if (r > first && row_slot[static_cast<std::size_t>(r) + 1] - row_slot[static_cast<std::size_t>(first)] > max_warp_slots) {
      row0.push_back(r);
      weight = 0;
    }
    weight += row_length(row_ptr, r) + 1;
    if (weight >= share && r + 1 < rows) {
      row0.push_back(r + 1);
      weight = 0;
    }
  }
  row0.push_back(rows);
  return row0;
}

/// The positions b..e-1 sorted by window (column >> shift), stable in storage order (rows ascending,
/// columns ascending within a row): a counting sort over the windows they touch, or a comparison sort
/// where those windows far outnumber the entries (narrow windows, few entries per warp).
template <class Index>
void sort_by_window(const Index* col_idx, std::int64_t b, std::int64_t e, int shift, std::vector<std::int64_t>& sorted,
                    std::vector<std::int64_t>& count) {
  auto window_of = [&](std::int64_t k) { return static_cast<std::int64_t>(col_idx[k]) >> shift; };
  std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = -1;
  for (std::int64_t k = b; k < e; ++k) {
    lo = std::min(lo, window_of(k));
    hi = std::max(hi, window_of(k));
  }
  sorted.resize(static_cast<std::size_t>(e - b));
  if (e > b && hi - lo >= 4 * (e - b) + 64) {
    for (std::int64_t k = b; k < e; ++k) sorted[static_cast<std::size_t>(k - b)] = k;
    std::stable_sort(sorted.begin(), sorted.end(), [&](std::int64_t p, std::int64_t q) { return window_of(p) < window_of(q); });
  } else if (e > b) {
    count.assign(static_cast<std::size_t>(hi - lo + 2), 0);
    for (std::int64_t k = b; k < e; ++k) ++count[static_cast<std::size_t>(window_of(k) - lo + 1)];
    for (std::size_t i = 1; i < count.size(); ++i) count[i] += count[i - 1];
    for (std::int64_t k = b; k < e; ++k) sorted[static_cast<std::size_t>(count[static_cast<std::size_t>(window_of(k) - lo)]++)] = k;
  }
}

/// Each entry's slot within its warp (rows r0..r1-1, first slot s0, first entry b): entry t of row r is
/// in the row's slot t mod S_r.
template <class Index>
void local_slots(const Index* row_ptr, std::int64_t r0, std::int64_t r1, std::int64_t s0,
                 const std::vector<std::int64_t>& row_slot, std::vector<std::int32_t>& slot) {
  const std::int64_t b = row_ptr[r0];
  slot.resize(static_cast<std::size_t>(static_cast<std::int64_t>(row_ptr[r1]) - b));
  for (std::int64_t r = r0; r < r1; ++r) {
    const std::int64_t first = row_slot[static_cast<std::size_t>(r)];
    const std::int64_t slots = row_slot[static_cast<std::size_t>(r) + 1] - first;
    for (std::int64_t k = row_ptr[r]; k < row_ptr[r + 1]; ++k)
      slot[static_cast<std::size_t>(k - b)] = static_cast<std::int32_t>(first - s0 + (k - row_ptr[r]) % slots);
  }
}

/// Cuts a warp's window-sorted entries into groups of 32 with no slot twice, first come first served,
/// and appends them (packed words and sources) to the layout.
template <class Index>
class group_packer {
public:
  group_packer(const Index* col_idx, int max_warp_slots, windowed_layout& w)
      : col_idx_(col_idx), w_(w), in_group_(static_cast<std::size_t>(max_warp_slots), -1), blocked_(in_group_),
        pending_(in_group_.size(), 0) {}

  /// One warp: entries `sorted` (positions), entry k in local slot slot[k - b], `warp_slots` slots.
  void pack(const std::vector<std::int64_t>& sorted, const std::vector<std::int32_t>& slot, std::int64_t b,
            std::int64_t warp_slots) {
    slot_ = &slot;
    b_ = b;
    waiting_.clear();
    std::size_t pos = 0;
    for (std::int64_t group = 0; pos < sorted.size() || !waiting_.empty(); ++group) {
      int taken = take_waiting(group);
      for (; taken < 32 && pos < sorted.size() && waiting_.size() < windowed_max_waiting; ++pos) {
        const std::int64_t k = sorted[pos];
        const std::size_t r = slot_of(k);
        if (in_group_[r] != group && pending_[r] == 0) {
          take(k, group, taken);
        } else {
          ++pending_[r];
          waiting_.push_back(k);
        }
      }
      for (; taken < 32; ++taken) {
        w_.packed.push_back(windowed_pad);
        w_.source.push_back(-1);
      }
    }
    std::fill(in_group_.begin(), in_group_.begin() + warp_slots, -1);  // this warp's marks
    std::fill(blocked_.begin(), blocked_.begin() + warp_slots, -1);
  }

private:
  std::size_t slot_of(std::int64_t k) const { return static_cast<std::size_t>((*slot_)[static_cast<std::size_t>(k - b_)]); }

  void take(std::int64_t k, std::int64_t group, int& taken) {
    const std::size_t r = slot_of(k);
    in_group_[r] = group;
    w_.packed.push_back(static_cast<std::uint32_t>(r) << windowed_column_bits | static_cast<std::uint32_t>(col_idx_[k]));
    w_.source.push_back(k);
    ++taken;
  }

  /// The entries held back, in order, where their slot is free in this group; an entry that stays
  /// keeps every later entry of its slot behind it.
  int take_waiting(std::int64_t group) {
    int taken = 0;
    still_.clear();
    for (const std::int64_t k : waiting_) {
      const std::size_t r = slot_of(k);
      if (taken < 32 && in_group_[r] != group && blocked_[r] != group) {
        take(k, group, taken);
        --pending_[r];
      } else {
        blocked_[r] = group;
        still_.push_back(k);
      }
    }
    waiting_.swap(still_);
    return taken;
  }

  const Index* col_idx_;
  windowed_layout& w_;
  std::vector<std::int64_t> in_group_, blocked_, pending_, waiting_, still_;
  const std::vector<std::int32_t>* slot_ = nullptr;
  std::int64_t b_ = 0;
};

/// Copies `count` elements from the device to a new host vector.
template <class T>
std::vector<T> download(const T* device, std::int64_t count) {
  std::vector<T> host(static_cast<std::size_t>(count));
  gpukit::copy_to_host(host.data(), device, host.size() * sizeof(T));
  return host;
}

/// Slots of the largest block of windowed_warps_per_block warps.
std::int32_t largest_block_slots(const std::vector<std::int64_t>& warp_slot0, std::int64_t warps) {
  std::int32_t most = 0;
  for (std::int64_t g = 0; g < warps; g += windowed_warps_per_block) {
    const std::int64_t end = std::min<std::int64_t>(g + windowed_warps_per_block, warps);
    most = std::max<std::int32_t>(
        most, static_cast<std::int32_t>(warp_slot0[static_cast<std::size_t>(end)] - warp_slot0[static_cast<std::size_t>(g)]));
  }
  return most;
}

/// The layout of the matrix `a` (host row_ptr and col_idx) on `sm_count` SMs: two blocks of 16 warps per
/// SM, at least ~64 slots (about rows + entries / 32) per warp so groups of 32 distinct slots fill, and
/// a block's slot sums within 96 KB of shared memory (1,023 float slots or 768 double slots per warp).
template <class Value, class Index>
windowed_layout layout_for_device(const csr_view<Value, Index>& a, const Index* row_ptr, const Index* col_idx,
                                  int sm_count) {
  constexpr std::size_t value_bytes = sizeof(Value);
  const std::int64_t slots = a.rows + a.nnz / windowed_slot_entries;
  const std::int64_t target_warps = std::min<std::int64_t>(std::int64_t{2} * windowed_warps_per_block * sm_count,
                                                           std::max<std::int64_t>(1, slots / 64));
  const int max_slots = static_cast<int>(std::min<std::size_t>(
      windowed_max_warp_slots, windowed_max_shared_bytes / (windowed_warps_per_block * value_bytes)));
  auto w = build_windowed_layout<Index>(a.rows, a.cols, row_ptr, col_idx, target_warps,
                                        windowed_window_bytes / static_cast<int>(value_bytes), max_slots);
  if (w.usable() && (w.warps() + windowed_warps_per_block - 1) / windowed_warps_per_block >
                        std::numeric_limits<std::int32_t>::max())
    w.why_not = std::to_string(w.warps()) + " warps exceed the grid limit of 2^31 - 1 blocks";
  return w;
}

}  // namespace

template <class Index>
windowed_layout build_windowed_layout(std::int64_t rows, std::int64_t cols, const Index* row_ptr, const Index* col_idx,
                                      std::int64_t target_warps, int window_columns, int max_warp_slots) {
  windowed_layout w;
  if (window_columns < 1 || (window_columns & (window_columns - 1)) != 0 || max_warp_slots < windowed_max_row_slots ||
      max_warp_slots > windowed_max_warp_slots)
    throw std::invalid_argument("windowed layout: window of " + std::to_string(window_columns) +
                                " columns (a power of two expected), " + std::to_string(max_warp_slots) + " slots per warp");
  w.why_not = windowed_refusal(rows, cols, row_ptr);
  if (!w.usable()) return w;
  w.window_columns = window_columns;
  int shift = 0;
  while ((1 << shift) < window_columns) ++shift;
  const std::int64_t nnz = rows > 0 ? static_cast<std::int64_t>(row_ptr[rows]) : 0;
  std::vector<std::int64_t> row_slot = first_slots(rows, row_ptr);
  w.warp_row0 = warp_row_ranges(rows, nnz, row_ptr, row_slot, target_warps, max_warp_slots);
  const std::int64_t warps = static_cast<std::int64_t>(w.warp_row0.size()) - 1;
  for (const std::int64_t r : w.warp_row0) w.warp_slot0.push_back(row_slot[static_cast<std::size_t>(r)]);
  w.packed.reserve(static_cast<std::size_t>(nnz + nnz / 16 + 32));
  w.source.reserve(w.packed.capacity());
  group_packer<Index> packer(col_idx, max_warp_slots, w);
  std::vector<std::int64_t> sorted, count;
  std::vector<std::int32_t> slot;
  for (std::size_t g = 0; g < static_cast<std::size_t>(warps); ++g) {
    w.warp_begin.push_back(static_cast<std::int64_t>(w.packed.size()));
    const std::int64_t r0 = w.warp_row0[g], r1 = w.warp_row0[g + 1];
    sort_by_window(col_idx, row_ptr[r0], row_ptr[r1], shift, sorted, count);
    local_slots(row_ptr, r0, r1, w.warp_slot0[g], row_slot, slot);
    packer.pack(sorted, slot, row_ptr[r0], w.warp_slot0[g + 1] - w.warp_slot0[g]);
  }
  w.warp_begin.push_back(static_cast<std::int64_t>(w.packed.size()));
  w.padding = static_cast<std::int64_t>(w.packed.size()) - nnz;
  w.max_block_slots = largest_block_slots(w.warp_slot0, warps);
  if (row_slot.back() > rows) w.row_slot = std::move(row_slot);
  return w;
}

template <class Value, class Index>
std::optional<windowed_state<Value>> make_windowed_state(const csr_view<Value, Index>& a, const Index* host_row_ptr,
                                                         int sm_count, std::string& why_not) {
  const std::vector<Index> cols = download(a.col_idx, a.nnz);
  const auto w = layout_for_device(a, host_row_ptr, cols.data(), sm_count);
  why_not = w.why_not;
  if (!w.usable()) return std::nullopt;
  const std::vector<Value> values = download(a.values, a.nnz);
  std::vector<Value> ordered(w.packed.size(), Value(0));
  for (std::size_t i = 0; i < ordered.size(); ++i)
    if (w.source[i] >= 0) ordered[i] = values[static_cast<std::size_t>(w.source[i])];
  windowed_state<Value> s;
  int shared = 0;
  GPUKIT_CUDA_CHECK(cudaDeviceGetAttribute(&shared, cudaDevAttrMaxSharedMemoryPerMultiprocessor, gpukit::current_device()));
  s.shared_per_sm = shared;
  s.warps = w.warps();
  s.block_slots = w.max_block_slots;
  s.window_columns = w.window_columns;
  s.padding = w.padding;
  for (std::size_t r = 0; r + 1 < w.row_slot.size(); ++r)
    s.max_row_slots = std::max<std::int32_t>(s.max_row_slots, static_cast<std::int32_t>(w.row_slot[r + 1] - w.row_slot[r]));
  s.packed = gpukit::device_buffer<std::uint32_t>(w.packed);
  s.values = gpukit::device_buffer<Value>(ordered);
  s.warp_begin = gpukit::device_buffer<std::int64_t>(w.warp_begin);
  s.warp_row0 = gpukit::device_buffer<std::int64_t>(w.warp_row0);
  s.warp_slot0 = gpukit::device_buffer<std::int64_t>(w.warp_slot0);
  s.row_slot = gpukit::device_buffer<std::int64_t>(w.row_slot);
  return s;
}

template windowed_layout build_windowed_layout<std::int32_t>(std::int64_t, std::int64_t, const std::int32_t*,
                                                             const std::int32_t*, std::int64_t, int, int);
template windowed_layout build_windowed_layout<std::int64_t>(std::int64_t, std::int64_t, const std::int64_t*,
                                                             const std::int64_t*, std::int64_t, int, int);

#define SPARSE_WINDOWED_INSTANTIATE(V, I)                                                                  \
  template std::optional<windowed_state<V>> make_windowed_state<V, I>(const csr_view<V, I>&, const I*, int, \
                                                                      std::string&);
SPARSE_FOR_EACH_VALUE_INDEX(SPARSE_WINDOWED_INSTANTIATE)
#undef SPARSE_WINDOWED_INSTANTIATE

}  // namespace sparse::detail
