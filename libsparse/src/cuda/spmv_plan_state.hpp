// What an spmv_plan keeps besides the matrix view and the row statistics: the state of the one algorithm
// that runs, one type per algorithm, each built by that algorithm's own analysis (spmv_*_plan.cpp), held
// in a std::variant. Host-only header (no CUDA syntax): shared by the plan (spmv_plan.cpp) and the
// dispatch (spmv.cu).
#pragma once
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>
#include <variant>

#include "reduce/exact_accumulator.hpp"
#include "sparse/spmv.hpp"
#include "spmv_adaptive_plan.hpp"
#include "spmv_column_blocks_plan.hpp"
#include "spmv_merge_plan.hpp"
#include "spmv_panels_plan.hpp"
#include "spmv_stencil_plan.hpp"
#include "spmv_windowed_plan.hpp"

namespace sparse::detail {

/// scalar, shared_cached, warp_per_row, warp_stream, block_per_row: the CSR arrays and the grid size are
/// all they need; which of them runs is the plan's algorithm().
struct csr_state {};

/// vector: lanes per row and how the lanes load the entries (choose_vector_state says when).
struct vector_state {
  int width = 32;          ///< lanes per row: 2, 4, 8, 16 or 32
  bool chunked = false;    ///< lanes read aligned 4-entry chunks
  bool streaming = false;  ///< (not chunked) evict-first entry loads
};

/// The vector algorithm's load modes for `width` lanes on a matrix with statistics `s` and values of
/// `value_bytes` bytes (the thresholds and their measurements are at the definition, spmv_choice.cpp).
vector_state choose_vector_state(const row_stats& s, int width, std::size_t value_bytes);

/// Whether an automatic plan whose CSR choice is `csr_choice` tries stencil (where the matrix qualifies)
/// or windowed (where its layout can be built) instead (spmv_choice.cpp, next to choose_algorithm).
bool automatic_tries_stencil(const row_stats& s, spmv_algorithm csr_choice);
bool automatic_tries_windowed(const row_stats& s, spmv_algorithm csr_choice, std::size_t value_bytes, int sm_count);
bool automatic_tries_column_blocks(const row_stats& s, spmv_algorithm csr_choice, std::size_t value_bytes, int sm_count);
/// Whether an automatic stencil plan runs its plain SpMV (not spmv_dots) through scalar's kernel.
bool automatic_stencil_applies_through_scalar(const row_stats& s);
/// How many column panels an automatic plan whose algorithm is `chosen` cuts the matrix into on a device
/// of `l2_bytes` of L2 (spmv_panels_plan.hpp); 1: none.
int automatic_column_panels(const row_stats& s, spmv_algorithm chosen, std::size_t value_bytes, std::int64_t l2_bytes);

template <class Value, class Index>
using algorithm_state = std::variant<csr_state, vector_state, stencil_state, windowed_state<Value>, merge_state<Value>,
                                     adaptive_state<Value>, column_panels_state<Value, Index>, column_blocks_state<Value>>;

/// Threads per block of the row kernels, stencil and the dots pass (spmv.cu).
constexpr int block_threads = 256;

/// Grid for `items` work items of `per_block` each: enough blocks for every item, capped at 16 blocks of
/// 256 per SM (two full residencies of 8 blocks); grid-stride loops cover the rest.
inline int grid_for(std::int64_t items, std::int64_t per_block, int sm_count) {
  const std::int64_t wanted = (items + per_block - 1) / per_block;
  return static_cast<int>(std::max<std::int64_t>(1, std::min<std::int64_t>(wanted, std::int64_t{16} * sm_count)));
}

/// spmv_dots's scratch (spmv_dots.cuh): 3 doubles per block of the largest grid it launches, which is
/// grid_for(rows, block_threads, sm_count) (its kernels take one wave of resident blocks, capped there:
/// at most 16 x 132 blocks, 50 KB, on an H100 SXM), and the last-block ticket, 0 between calls.
/// Allocated with the plan, so spmv_dots allocates nothing; written by every call, hence mutable
/// (spmv_dots takes the plan const, so two calls of one plan must not overlap). Empty for the plans
/// spmv_dots refuses or does not launch for (not square, no rows). dots_summation::exact's global
/// accumulator (reduce::exact::end_grid): 3 sums' limbs (sized for double, the larger: 3 x 68 words,
/// 1.6 KB), then 3 flag words and a ticket, zero between calls.
struct dots_workspace {
  mutable gpukit::device_buffer<double> partials;
  mutable gpukit::device_buffer<unsigned> ticket;
  mutable gpukit::device_buffer<unsigned long long> exact_limb;
  mutable gpukit::device_buffer<unsigned> exact_counters;

  dots_workspace() = default;
  dots_workspace(std::int64_t rows, int sm_count)
      : partials(3 * std::int64_t{grid_for(rows, block_threads, sm_count)}), ticket(1),
        exact_limb(3 * reduce::exact_accumulator<double>::limbs), exact_counters(4) {
    ticket.fill_bytes(0);
    exact_limb.fill_bytes(0);
    exact_counters.fill_bytes(0);
  }
};

template <class Value, class Index>
struct spmv_plan_state {
  int sm_count = 0;  ///< the device's SMs at plan time: the grids of the row kernels and stencil
  algorithm_state<Value, Index> algorithm;
  dots_workspace dots;
};

/// describe()'s details of the states defined here (the others are next to their state types).
inline std::string details_of(const csr_state&) { return {}; }
inline std::string details_of(const vector_state& s) {
  return " (" + std::to_string(s.width) + " lanes per row" + (s.chunked ? ", 4-entry chunks" : "") +
         (s.streaming ? ", streaming loads" : "") + ")";
}

}  // namespace sparse::detail
