// spmv_plan: checks its inputs, resolves the automatic choice (spmv_choice.cpp) and builds the state of
// the algorithm that runs, each algorithm through its own analysis (spmv_*_plan.cpp). No CUDA syntax: the
// launches live in spmv.cu.
#include <algorithm>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "gpukit/cuda_launch.hpp"
#include "instantiate.hpp"
#include "sparse/spmv.hpp"
#include "spmv_plan_state.hpp"

namespace sparse {
namespace {

void check_vector_width(int vector_width) {
  if (vector_width != 0 && vector_width != 2 && vector_width != 4 && vector_width != 8 && vector_width != 16 &&
      vector_width != 32)
    throw std::invalid_argument("spmv plan: vector width " + std::to_string(vector_width) +
                                " (expected 0 = choose, 2, 4, 8, 16 or 32)");
}

/// Reads col_idx of a device matrix in pieces (the stencil analysis stops at the first piece that rules
/// the matrix out).
/// `shift` (a plan's x_halo::before) is subtracted from every column: the stencil's offsets are then
/// relative to the row's own entry of x.
template <class Index>
detail::fetch_columns<Index> device_columns(const Index* d_col_idx, std::int64_t shift) {
  return [d_col_idx, shift](std::int64_t first, std::int64_t count, Index* dst) {
    gpukit::copy_to_host(dst, d_col_idx + first, static_cast<std::size_t>(count) * sizeof(Index));
    if (shift != 0)
      for (std::int64_t i = 0; i < count; ++i) dst[i] = static_cast<Index>(dst[i] - shift);
  };
}

}  // namespace

template <class Value, class Index>
spmv_plan<Value, Index>::spmv_plan(const device_csr<Value, Index>& a, spmv_algorithm algorithm, int vector_width)
    : view_(a.view()), requested_(algorithm) {
  std::vector<Index> host_row_ptr(static_cast<std::size_t>(a.rows() + 1), Index(0));
  if (a.rows() > 0)
    gpukit::copy_to_host(host_row_ptr.data(), view_.row_ptr, host_row_ptr.size() * sizeof(Index));
  build(host_row_ptr.data(), vector_width);
}

template <class Value, class Index>
spmv_plan<Value, Index>::spmv_plan(const device_csr<Value, Index>& a, x_halo halo, spmv_algorithm algorithm)
    : view_(a.view()), requested_(algorithm), halo_(halo) {
  if (halo.before < 0 || halo.after < 0 || a.cols() != halo.before + a.rows() + halo.after)
    throw std::invalid_argument("spmv plan: a matrix of " + std::to_string(a.rows()) + " x " + std::to_string(a.cols()) +
                                " does not have the x halo's " + std::to_string(halo.before) + " + rows + " +
                                std::to_string(halo.after) + " columns");
  std::vector<Index> host_row_ptr(static_cast<std::size_t>(a.rows() + 1), Index(0));
  if (a.rows() > 0)
    gpukit::copy_to_host(host_row_ptr.data(), view_.row_ptr, host_row_ptr.size() * sizeof(Index));
  build(host_row_ptr.data(), 0);
}

template <class Value, class Index>
spmv_plan<Value, Index>::spmv_plan(const csr_view<Value, Index>& device_view, const Index* host_row_ptr,
                                   spmv_algorithm algorithm, int vector_width)
    : view_(device_view), requested_(algorithm) {
  if (device_view.rows < 0 || device_view.cols < 0 || host_row_ptr == nullptr)
    throw std::invalid_argument("spmv plan: negative shape or no row_ptr");
  const std::int64_t entries = static_cast<std::int64_t>(host_row_ptr[device_view.rows]) - host_row_ptr[0];
  if (entries != device_view.nnz)
    throw std::invalid_argument("spmv plan: row_ptr[rows] - row_ptr[0] = " + std::to_string(entries) +
                                " differs from nnz = " + std::to_string(device_view.nnz));
  build(host_row_ptr, vector_width);
}

// The algorithm that runs: the requested one, or for automatic the CSR choice of choose_algorithm, which
// stencil, column_blocks or windowed replace where spmv_choice.cpp says they are worth trying and their
// analysis accepts the matrix. A forced stencil, column_blocks or windowed plan throws where the analysis
// refuses the matrix.
template <class Value, class Index>
void spmv_plan<Value, Index>::build(const Index* host_row_ptr, int vector_width) {
  check_vector_width(vector_width);
  stats_ = compute_row_stats(view_.rows, view_.cols, host_row_ptr);
  if (host_row_ptr[0] != 0) throw std::invalid_argument("spmv plan: row_ptr[0] must be 0");
  algorithm_ = requested_ == spmv_algorithm::automatic ? choose_algorithm(stats_) : requested_;
  state_ = std::make_unique<detail::spmv_plan_state<Value, Index>>();
  state_->sm_count = gpukit::sm_count();
  if (view_.rows > 0 && view_.rows == view_.cols - halo_.before - halo_.after) state_->dots = detail::dots_workspace(view_.rows, state_->sm_count);
  if (take_stencil(host_row_ptr) || take_column_blocks(host_row_ptr) || take_windowed(host_row_ptr)) return;
  take_adaptive_for_scattered_columns(host_row_ptr);
  if (take_column_panels(host_row_ptr)) return;
  auto& st = state_->algorithm;
  switch (algorithm_) {
    case spmv_algorithm::vector:
      st = detail::choose_vector_state(stats_, vector_width != 0 ? vector_width : choose_vector_width(stats_),
                                       sizeof(Value));
      break;
    case spmv_algorithm::merge: st = detail::make_merge_state<Value>(view_.rows, host_row_ptr); break;
    case spmv_algorithm::adaptive: st = detail::make_adaptive_state<Value>(view_.rows, host_row_ptr); break;
    default: st = detail::csr_state{}; break;  // the row kernels: nothing to analyse
  }
}

template <class Value, class Index>
bool spmv_plan<Value, Index>::take_stencil(const Index* host_row_ptr) {
  const bool automatic = requested_ == spmv_algorithm::automatic;
  if (requested_ != spmv_algorithm::stencil && !(automatic && detail::automatic_tries_stencil(stats_, algorithm_)))
    return false;
  const auto table = detail::build_stencil_table<Index>(view_.rows, host_row_ptr, device_columns(view_.col_idx, halo_.before));
  if (!table.usable()) {
    if (!automatic)
      throw std::invalid_argument("spmv plan: the stencil algorithm does not apply to this matrix: " + table.why_not);
    return false;  // automatic keeps its CSR choice
  }
  detail::stencil_row_starts starts;
  if (stats_.max_length <= detail::stencil_unrolled_row &&
      !detail::pack_stencil_row_starts<Index>(view_.rows, host_row_ptr, table.pattern_of_row, starts))
    throw std::logic_error("spmv plan: rows of at most 8 entries did not pack their starts");  // 31 x 8 <= 255
  algorithm_ = spmv_algorithm::stencil;
  detail::stencil_state st(table, stats_.max_length, starts);
  st.plain_through_scalar = automatic && detail::automatic_stencil_applies_through_scalar(stats_);
  state_->algorithm = std::move(st);
  return true;
}

namespace {
// The step windowed and column_blocks share: try an algorithm with a format of its own where it was
// asked for, or where automatic tries it (`automatic_tries`); make_state returns its state, or
// std::nullopt with the reason. A forced plan throws that reason; automatic keeps its choice.
template <class MakeState>
auto take_own_format(spmv_algorithm which, spmv_algorithm requested, bool automatic_tries, MakeState make_state)
    -> decltype(make_state(std::declval<std::string&>())) {
  const bool automatic = requested == spmv_algorithm::automatic;
  if (requested != which && !(automatic && automatic_tries)) return std::nullopt;
  std::string why_not;
  auto state = make_state(why_not);
  if (!state && !automatic)
    throw std::invalid_argument(std::string("spmv plan: the ") + to_string(which) +
                                " algorithm does not apply to this matrix: " + why_not);
  return state;
}
}  // namespace

template <class Value, class Index>
bool spmv_plan<Value, Index>::take_windowed(const Index* host_row_ptr) {
  const int sms = state_->sm_count;
  auto windowed = take_own_format(
      spmv_algorithm::windowed, requested_, detail::automatic_tries_windowed(stats_, algorithm_, sizeof(Value), sms),
      [&](std::string& why_not) { return detail::make_windowed_state(view_, host_row_ptr, sms, why_not); });
  if (!windowed) return false;
  algorithm_ = spmv_algorithm::windowed;
  state_->algorithm = std::move(*windowed);
  return true;
}

template <class Value, class Index>
bool spmv_plan<Value, Index>::take_column_blocks(const Index* host_row_ptr) {
  const int sms = state_->sm_count;
  auto blocks = take_own_format(
      spmv_algorithm::column_blocks, requested_,
      detail::automatic_tries_column_blocks(stats_, algorithm_, sizeof(Value), sms),
      [&](std::string& why_not) { return detail::make_column_blocks_state(view_, host_row_ptr, sms, why_not); });
  if (!blocks) return false;
  algorithm_ = spmv_algorithm::column_blocks;
  state_->algorithm = std::move(*blocks);
  return true;
}

// automatic's scalar choice on a matrix whose x exceeds a third of L2 (samples_column_spread): the
// fraction of entries farther than far_column_distance from their row's diagonal position, over 16
// ranges of 1,024 rows spread evenly (their columns copied to the host), decides for adaptive
// (scattered_columns_take_adaptive; the measurements are in spmv_choice.cpp).
// An automatic adaptive plan of a matrix whose x is about the size of L2 runs over column panels where
// spmv_choice.cpp's automatic_column_panels says so; not with an x halo (the panels index x from 0).
template <class Value, class Index>
bool spmv_plan<Value, Index>::take_column_panels(const Index* host_row_ptr) {
  if (requested_ != spmv_algorithm::automatic || halo_.before != 0 || halo_.after != 0) return false;
  const int panels = detail::automatic_column_panels(stats_, algorithm_, sizeof(Value), gpukit::l2_cache_bytes());
  if (panels <= 1) return false;
  state_->algorithm = detail::make_column_panels_state(view_, host_row_ptr, panels);
  return true;
}

template <class Value, class Index>
void spmv_plan<Value, Index>::take_adaptive_for_scattered_columns(const Index* host_row_ptr) {
  if (requested_ != spmv_algorithm::automatic || !samples_column_spread(stats_, algorithm_, sizeof(Value))) return;
  constexpr std::int64_t ranges = 16, range_rows = 1024;
  const std::int64_t rows = view_.rows, cols = view_.cols - halo_.before - halo_.after;
  std::int64_t far = 0, sampled = 0;
  std::vector<Index> c;
  for (std::int64_t k = 0; k < ranges; ++k) {
    const std::int64_t first = rows * k / ranges, end = std::min(rows, first + range_rows);
    const std::int64_t e0 = host_row_ptr[first], e1 = host_row_ptr[end];
    c.resize(static_cast<std::size_t>(e1 - e0));
    if (c.empty()) continue;
    device_columns(view_.col_idx, halo_.before)(e0, e1 - e0, c.data());
    for (std::int64_t i = first; i < end; ++i) {
      const auto diagonal = static_cast<std::int64_t>(static_cast<double>(i) * static_cast<double>(cols) /
                                                      static_cast<double>(rows));
      for (auto e = static_cast<std::int64_t>(host_row_ptr[i]); e < host_row_ptr[i + 1]; ++e) {
        const std::int64_t d = static_cast<std::int64_t>(c[static_cast<std::size_t>(e - e0)]) - diagonal;
        far += (d < 0 ? -d : d) > far_column_distance;
      }
    }
    sampled += e1 - e0;
  }
  // build()'s switch then makes adaptive's state.
  if (sampled > 0 && scattered_columns_take_adaptive(static_cast<double>(far) / static_cast<double>(sampled)))
    algorithm_ = spmv_algorithm::adaptive;
}

template <class Value, class Index>
spmv_plan<Value, Index>::spmv_plan(spmv_plan&&) noexcept = default;
template <class Value, class Index>
spmv_plan<Value, Index>& spmv_plan<Value, Index>::operator=(spmv_plan&&) noexcept = default;
template <class Value, class Index>
spmv_plan<Value, Index>::~spmv_plan() = default;

template <class Value, class Index>
int spmv_plan<Value, Index>::vector_width() const noexcept {
  const auto* v = std::get_if<detail::vector_state>(&state_->algorithm);
  return v ? v->width : 0;
}

template <class Value, class Index>
std::string spmv_plan<Value, Index>::describe() const {
  return to_string(algorithm_) + std::visit([](const auto& s) { return detail::details_of(s); }, state_->algorithm);
}

#define SPARSE_PLAN_INSTANTIATE(V, I) template class spmv_plan<V, I>;
SPARSE_FOR_EACH_VALUE_INDEX(SPARSE_PLAN_INSTANTIATE)
#undef SPARSE_PLAN_INSTANTIATE

}  // namespace sparse
