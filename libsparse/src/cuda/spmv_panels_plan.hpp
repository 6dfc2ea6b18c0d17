// Column panels: an automatic plan's copy of a matrix whose x is about the size of L2, cut into ranges of
// columns so that each pass of the SpMV gathers from a part of x that L2 keeps (spmv_choice.cpp,
// automatic_column_panels, says when and why). Host-only header (no CUDA syntax): shared by the plan
// (spmv_plan.cpp, spmv_panels_plan.cpp) and the dispatch (spmv.cu).
//
// Panel k holds every row's entries whose column lies in [k w, (k + 1) w) (w = `width`; the last panel
// may be narrower), in the row's column order, with the column stored relative to k w: a CSR matrix of
// all the rows and at most w columns, multiplied by x + k w. The SpMV runs panel 0 with the caller's
// beta and every later panel with beta 1, each through its own adaptive plan; a row's sum is therefore
// its panels' partial sums added in panel order (deterministic, but not scalar's order).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "sparse/csr.hpp"
#include "sparse/csr_view.hpp"
#include "spmv_adaptive_plan.hpp"

namespace sparse::detail {

template <class Value, class Index>
struct column_panels_state {
  std::int64_t width = 0;                          ///< columns per panel (the last may hold fewer)
  std::vector<device_csr<Value, Index>> matrices;  ///< panel k: rows x min(width, cols - k width)
  std::vector<adaptive_state<Value>> plans;        ///< panel k's adaptive partition
};

/// Splits the host CSR arrays of a rows x cols matrix into `panels` column panels (panels >= 1); every
/// entry goes to exactly one panel, in its row's order. Host-only, so that tests check it without a GPU.
template <class Value, class Index>
std::vector<host_csr<Value, Index>> split_column_panels(std::int64_t rows, std::int64_t cols, const Index* row_ptr,
                                                        const Index* col_idx, const Value* values, int panels);

/// Reads the device matrix `a` (row_ptr also on the host) back, splits it into `panels` panels, uploads
/// them and builds each panel's adaptive partition.
template <class Value, class Index>
column_panels_state<Value, Index> make_column_panels_state(const csr_view<Value, Index>& a, const Index* host_row_ptr,
                                                           int panels);

/// describe()'s details, e.g. " (2 column panels of 5000000 columns; panel 0 (tiles: ...); panel 1 (...))".
template <class Value, class Index>
std::string details_of(const column_panels_state<Value, Index>& s) {
  std::string out = " (" + std::to_string(s.matrices.size()) + " column panels of " + std::to_string(s.width) + " columns";
  for (std::size_t k = 0; k < s.plans.size(); ++k) out += "; panel " + std::to_string(k) + details_of(s.plans[k]);
  return out + ")";
}

}  // namespace sparse::detail
