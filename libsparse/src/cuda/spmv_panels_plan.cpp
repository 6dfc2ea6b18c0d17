// Column panels (spmv_panels_plan.hpp): the host split and the upload.
#include "spmv_panels_plan.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>
#include <utility>

#include "gpukit/device_buffer.hpp"
#include "instantiate.hpp"

namespace sparse::detail {

template <class Value, class Index>
std::vector<host_csr<Value, Index>> split_column_panels(std::int64_t rows, std::int64_t cols, const Index* row_ptr,
                                                        const Index* col_idx, const Value* values, int panels) {
  if (panels < 1 || rows < 0 || cols < 0)
    throw std::invalid_argument("split_column_panels: " + std::to_string(panels) + " panels of a " + std::to_string(rows) +
                                " x " + std::to_string(cols) + " matrix (at least 1 panel, sizes not negative)");
  const std::int64_t width = cols == 0 ? 0 : (cols + panels - 1) / panels;
  std::vector<std::vector<Index>> rp(static_cast<std::size_t>(panels), std::vector<Index>(static_cast<std::size_t>(rows) + 1, 0));
  std::vector<std::vector<Index>> ci(static_cast<std::size_t>(panels));
  std::vector<std::vector<Value>> v(static_cast<std::size_t>(panels));
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t p = row_ptr[r]; p < row_ptr[r + 1]; ++p) {
      const std::int64_t c = col_idx[p];
      const auto k = static_cast<std::size_t>(c / width);
      ci[k].push_back(static_cast<Index>(c - static_cast<std::int64_t>(k) * width));
      v[k].push_back(values[p]);
    }
    for (std::size_t k = 0; k < rp.size(); ++k) rp[k][static_cast<std::size_t>(r) + 1] = static_cast<Index>(ci[k].size());
  }
  std::vector<host_csr<Value, Index>> out;
  out.reserve(static_cast<std::size_t>(panels));
  for (std::size_t k = 0; k < rp.size(); ++k) {
    const std::int64_t first = static_cast<std::int64_t>(k) * width;
    const std::int64_t w = std::min(width, std::max<std::int64_t>(0, cols - first));
    out.emplace_back(rows, w, std::move(rp[k]), std::move(ci[k]), std::move(v[k]));
  }
  return out;
}

template <class Value, class Index>
column_panels_state<Value, Index> make_column_panels_state(const csr_view<Value, Index>& a, const Index* host_row_ptr,
                                                           int panels) {
  std::vector<Index> cols(static_cast<std::size_t>(a.nnz));
  std::vector<Value> values(static_cast<std::size_t>(a.nnz));
  gpukit::copy_to_host(cols.data(), a.col_idx, cols.size() * sizeof(Index));
  gpukit::copy_to_host(values.data(), a.values, values.size() * sizeof(Value));
  auto parts = split_column_panels<Value, Index>(a.rows, a.cols, host_row_ptr, cols.data(), values.data(), panels);
  column_panels_state<Value, Index> st;
  st.width = parts.empty() ? 0 : parts[0].cols();
  for (const auto& part : parts) {
    st.plans.push_back(make_adaptive_state<Value>(part.rows(), part.row_ptr().data()));
    st.matrices.emplace_back(part);
  }
  return st;
}

#define SPARSE_PANELS_INSTANTIATE(V, I)                                                                          \
  template std::vector<host_csr<V, I>> split_column_panels<V, I>(std::int64_t, std::int64_t, const I*, const I*, \
                                                                 const V*, int);                                 \
  template column_panels_state<V, I> make_column_panels_state<V, I>(const csr_view<V, I>&, const I*, int);
SPARSE_FOR_EACH_VALUE_INDEX(SPARSE_PANELS_INSTANTIATE)
#undef SPARSE_PANELS_INSTANTIATE

}  // namespace sparse::detail
