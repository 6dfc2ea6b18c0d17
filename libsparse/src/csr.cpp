// host_csr / device_csr bodies and their explicit instantiations (float, double) x (int32, int64).
#include "sparse/csr.hpp"

#include <algorithm>
#include <sstream>
#include <string>

#include "instantiate.hpp"

namespace sparse {

template <class Value, class Index>
host_csr<Value, Index>::host_csr() : row_ptr_(1, Index{0}) {}

template <class Value, class Index>
host_csr<Value, Index>::host_csr(std::int64_t rows, std::int64_t cols, std::vector<Index> row_ptr,
                                 std::vector<Index> col_idx, std::vector<Value> values)
    : rows_(rows), cols_(cols), row_ptr_(std::move(row_ptr)), col_idx_(std::move(col_idx)), values_(std::move(values)) {
  std::ostringstream msg;
  if (rows < 0 || cols < 0) {
    msg << "negative shape " << rows << " x " << cols;
  } else if (static_cast<std::uint64_t>(row_ptr_.size()) != static_cast<std::uint64_t>(rows) + 1) {
    msg << "row_ptr has " << row_ptr_.size() << " entries, expected rows + 1 = " << rows + 1;
  } else if (col_idx_.size() != values_.size()) {
    msg << "col_idx has " << col_idx_.size() << " entries but values has " << values_.size();
  } else if (static_cast<std::int64_t>(row_ptr_.back()) != static_cast<std::int64_t>(values_.size())) {
    msg << "row_ptr[rows] = row_ptr[" << rows << "] = " << static_cast<std::int64_t>(row_ptr_.back())
        << " but nnz = " << values_.size();
  } else if (static_cast<std::uint64_t>(values_.size()) > static_cast<std::uint64_t>(std::numeric_limits<Index>::max())) {
    msg << "nnz = " << values_.size() << " does not fit the index type";
  } else {
    return;
  }
  throw invalid_matrix("host_csr: " + msg.str());
}

template <class Value, class Index>
csr_view<Value, Index> host_csr<Value, Index>::view() const noexcept {
  return {rows_, cols_, nnz(), row_ptr_.data(), col_idx_.data(), values_.data()};
}

template <class Value, class Index>
void host_csr<Value, Index>::validate(validate_options options) const {
  std::ostringstream m;
  auto fail = [&m](const std::ostream&) { throw invalid_matrix(m.str()); };
  const std::int64_t nz = nnz();
  if (rows_ < 0 || cols_ < 0) fail(m << "negative shape " << rows_ << " x " << cols_);
  if (static_cast<std::uint64_t>(row_ptr_.size()) != static_cast<std::uint64_t>(rows_) + 1)
    fail(m << "row_ptr has " << row_ptr_.size() << " entries, expected rows + 1 = " << rows_ + 1);
  if (col_idx_.size() != values_.size())
    fail(m << "col_idx has " << col_idx_.size() << " entries but values has " << values_.size());
  if (row_ptr_[0] != 0) fail(m << "row_ptr[0] = " << static_cast<std::int64_t>(row_ptr_[0]) << ", expected 0");
  for (std::int64_t i = 0; i < rows_; ++i) {
    const std::int64_t b = row_ptr_[static_cast<std::size_t>(i)], e = row_ptr_[static_cast<std::size_t>(i) + 1];
    if (e < b)
      fail(m << "row_ptr decreases at row " << i << ": row_ptr[" << i << "] = " << b << " > row_ptr[" << i + 1
             << "] = " << e);
    if (e > nz)
      fail(m << "row " << i << ": row_ptr[" << i + 1 << "] = " << e << " exceeds nnz = " << nz);
    for (std::int64_t p = b; p < e; ++p) {
      const std::int64_t c = col_idx_[static_cast<std::size_t>(p)];
      if (c < 0 || c >= cols_)
        fail(m << "row " << i << ": col_idx[" << p << "] = " << c << " out of range [0, " << cols_ << ")");
      if (p > b) {
        const std::int64_t prev = col_idx_[static_cast<std::size_t>(p) - 1];
        if (options.require_sorted_columns && c < prev)
          fail(m << "row " << i << ": columns not sorted: col_idx[" << p - 1 << "] = " << prev << " > col_idx[" << p
                 << "] = " << c);
        if (options.require_unique_columns && c == prev)
          fail(m << "row " << i << ": column " << c << " repeated at col_idx[" << p - 1 << "] and col_idx[" << p << "]");
      }
    }
  }
  if (static_cast<std::int64_t>(row_ptr_[static_cast<std::size_t>(rows_)]) != nz)
    fail(m << "row_ptr[rows] = row_ptr[" << rows_ << "] = " << static_cast<std::int64_t>(row_ptr_[static_cast<std::size_t>(rows_)])
           << " but nnz = " << nz);
  // Unique-but-unsorted rows are checked with a sort of a copy (rare path; only when asked for alone).
  if (options.require_unique_columns && !options.require_sorted_columns) {
    std::vector<Index> row;
    for (std::int64_t i = 0; i < rows_; ++i) {
      row.assign(col_idx_.begin() + row_ptr_[static_cast<std::size_t>(i)], col_idx_.begin() + row_ptr_[static_cast<std::size_t>(i) + 1]);
      std::sort(row.begin(), row.end());
      auto dup = std::adjacent_find(row.begin(), row.end());
      if (dup != row.end()) fail(m << "row " << i << ": column " << static_cast<std::int64_t>(*dup) << " repeated");
    }
  }
}

template <class Value, class Index>
device_csr<Value, Index>::device_csr(const host_csr<Value, Index>& host)
    : rows_(host.rows()), cols_(host.cols()), nnz_(host.nnz()), row_ptr_(host.row_ptr()), col_idx_(host.col_idx()),
      values_(host.values()) {}

template <class Value, class Index>
csr_view<Value, Index> device_csr<Value, Index>::view() const noexcept {
  return {rows_, cols_, nnz_, row_ptr_.data(), col_idx_.data(), values_.data()};
}

template <class Value, class Index>
host_csr<Value, Index> device_csr<Value, Index>::download() const {
  // A default-constructed device_csr holds no row_ptr: it downloads as the 0x0 matrix.
  if (row_ptr_.size() == 0) return host_csr<Value, Index>();
  return host_csr<Value, Index>(rows_, cols_, row_ptr_.download(), col_idx_.download(), values_.download());
}

#define SPARSE_CSR_INSTANTIATE(V, I) \
  template class host_csr<V, I>;     \
  template class device_csr<V, I>;
SPARSE_FOR_EACH_VALUE_INDEX(SPARSE_CSR_INSTANTIATE)
#undef SPARSE_CSR_INSTANTIATE

}  // namespace sparse
