// Owning CSR containers: host_csr (std::vectors, copyable) and device_csr (move-only, device memory).
// Kernels never see these: they take csr_view by value (csr_view.hpp). No CUDA syntax here.
#pragma once
#include <cstddef>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpukit/device_buffer.hpp"
#include "sparse/csr_view.hpp"

namespace sparse {

/// A CSR matrix broke a structural rule; what() names the first violation with its row and values.
class invalid_matrix : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// A matrix or vector file could not be read or written; what() names the file, the line or dataset,
/// and the problem ("a.mtx:14: column index 600 out of range 1..479").
class io_error : public std::runtime_error {
public:
  using std::runtime_error::runtime_error;
};

/// What the readers (read_matrix, read_matrix_market, read_hdf5, the vector readers) accept beyond
/// their strict default.
struct read_options {
  /// Accept NaN and Inf values. Refused by default, naming the line or dataset index: a non-finite
  /// matrix makes every product through its row NaN, which a check can only confirm, not catch.
  bool allow_nonfinite = false;
};

/// Optional checks of validate() beyond the structural ones (which are always made).
struct validate_options {
  bool require_sorted_columns = false;  ///< columns strictly or non-strictly increasing in each row
  bool require_unique_columns = false;  ///< no column twice in a row
};

/// Owning CSR matrix in host memory (0-based). Index (std::int32_t or std::int64_t) types both row_ptr
/// and col_idx; counts are 64-bit. Copyable (plain std::vectors).
///
/// Example:
///   sparse::host_csr<double, std::int32_t> a(2, 2, {0, 1, 2}, {0, 1}, {1.0, 2.0});
///   sparse::validate_options opt;  opt.require_sorted_columns = true;  a.validate(opt);
///   auto f = a.cast<float, std::int32_t>();
template <class Value, class Index>
class host_csr {
public:
  using value_type = Value;
  using index_type = Index;

  /// The 0x0 matrix (row_ptr = {0}).
  host_csr();
  /// Takes the arrays; checks the basic shape only (rows, cols >= 0, row_ptr.size() == rows + 1,
  /// col_idx.size() == values.size(), row_ptr.back() == nnz) and throws invalid_matrix otherwise.
  /// Call validate() for the full check (monotone row_ptr, column range, optional order).
  host_csr(std::int64_t rows, std::int64_t cols, std::vector<Index> row_ptr, std::vector<Index> col_idx,
           std::vector<Value> values);

  std::int64_t rows() const noexcept { return rows_; }
  std::int64_t cols() const noexcept { return cols_; }
  std::int64_t nnz() const noexcept { return static_cast<std::int64_t>(values_.size()); }

  const std::vector<Index>& row_ptr() const noexcept { return row_ptr_; }
  const std::vector<Index>& col_idx() const noexcept { return col_idx_; }
  const std::vector<Value>& values() const noexcept { return values_; }
  /// Mutable access: the caller keeps the shape consistent (call validate() after structural edits).
  std::vector<Index>& row_ptr() noexcept { return row_ptr_; }
  std::vector<Index>& col_idx() noexcept { return col_idx_; }
  std::vector<Value>& values() noexcept { return values_; }

  /// Non-owning view with host pointers; valid while *this lives and is not resized.
  csr_view<Value, Index> view() const noexcept;

  /// Checks row_ptr.size() == rows + 1, row_ptr[0] == 0, row_ptr non-decreasing, row_ptr[rows] == nnz,
  /// 0 <= col < cols, and the optional order checks. Throws invalid_matrix naming the first violation,
  /// e.g. "row_ptr decreases at row 7: row_ptr[7] = 12 > row_ptr[8] = 11". O(rows + nnz), serial.
  void validate(validate_options options = {}) const;

  /// Converts value and index types (float <-> double rounds to nearest; int64 -> int32 throws
  /// invalid_matrix if any index or nnz does not fit).
  template <class V2, class I2>
  host_csr<V2, I2> cast() const;

private:
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  std::vector<Index> row_ptr_;
  std::vector<Index> col_idx_;
  std::vector<Value> values_;
};

/// Owning CSR matrix in device memory (cudaMalloc through gpukit::device_buffer). Move-only RAII.
///
/// Example:
///   sparse::device_csr<float, std::int32_t> d(host);   // uploads (synchronous)
///   run_kernel(d.view());                              // device pointers
///   auto back = d.download();
template <class Value, class Index>
class device_csr {
public:
  device_csr() = default;
  /// Uploads `host` (synchronous copies). Throws gpukit::cuda_error / gpukit::no_cuda_device.
  explicit device_csr(const host_csr<Value, Index>& host);
  device_csr(const device_csr&) = delete;
  device_csr& operator=(const device_csr&) = delete;
  device_csr(device_csr&&) noexcept = default;
  device_csr& operator=(device_csr&&) noexcept = default;
  ~device_csr() = default;

  std::int64_t rows() const noexcept { return rows_; }
  std::int64_t cols() const noexcept { return cols_; }
  std::int64_t nnz() const noexcept { return nnz_; }

  /// Non-owning view with device pointers.
  csr_view<Value, Index> view() const noexcept;
  /// Copies the matrix back to the host (synchronous).
  host_csr<Value, Index> download() const;

private:
  std::int64_t rows_ = 0;
  std::int64_t cols_ = 0;
  std::int64_t nnz_ = 0;
  gpukit::device_buffer<Index> row_ptr_;
  gpukit::device_buffer<Index> col_idx_;
  gpukit::device_buffer<Value> values_;
};

template <class Value, class Index>
template <class V2, class I2>
host_csr<V2, I2> host_csr<Value, Index>::cast() const {
  // 64 -> 32-bit indices: every row_ptr entry is <= nnz and every column < cols, so checking nnz and
  // cols (and the largest stored entries, in case the matrix is not valid) is enough.
  auto narrow = [](const std::vector<Index>& in, const char* what) {
    std::vector<I2> out(in.size());
    for (std::size_t i = 0; i < in.size(); ++i) {
      const Index v = in[i];
      if constexpr (sizeof(I2) < sizeof(Index)) {
        if (v > static_cast<Index>(std::numeric_limits<I2>::max()) ||
            v < static_cast<Index>(std::numeric_limits<I2>::min()))
          throw invalid_matrix(std::string("cast: ") + what + "[" + std::to_string(i) + "] = " +
                               std::to_string(v) + " does not fit the narrower index type");
      }
      out[i] = static_cast<I2>(v);
    }
    return out;
  };
  std::vector<V2> vals(values_.begin(), values_.end());
  return host_csr<V2, I2>(rows_, cols_, narrow(row_ptr_, "row_ptr"), narrow(col_idx_, "col_idx"),
                          std::move(vals));
}

// Defined in src/csr.cpp for Value in {float, double} x Index in {std::int32_t, std::int64_t}.
#define SPARSE_CSR_EXTERN(V, I)                  \
  extern template class host_csr<V, I>;          \
  extern template class device_csr<V, I>;
SPARSE_CSR_EXTERN(float, std::int32_t)
SPARSE_CSR_EXTERN(float, std::int64_t)
SPARSE_CSR_EXTERN(double, std::int32_t)
SPARSE_CSR_EXTERN(double, std::int64_t)
#undef SPARSE_CSR_EXTERN

}  // namespace sparse
