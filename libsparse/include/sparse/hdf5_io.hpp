// HDF5 input/output of CSR matrices (HDF5 C API; schema in data/README.md, readable with h5py + SciPy).
//
// Schema: a group (default "/matrix") with
//   attributes  format = "csr" (string), shape = int64[2] {rows, cols}, index_base = int64 0
//   datasets    row_ptr [rows + 1], col_idx [nnz] (int32 or int64), values [nnz] (float32 or float64),
//               optional x [cols] and y [rows] (float32 or float64): a right-hand side and/or a result.
// Datasets of more than 65,536 elements are chunked (262,144 elements per chunk) and compressed
// (shuffle + deflate level 1) when the HDF5 library has the deflate filter.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "sparse/csr.hpp"

namespace sparse {

/// Options of write_hdf5.
template <class Value>
struct hdf5_write_options {
  std::string group = "/matrix";   ///< group holding the matrix (created with intermediate groups)
  int deflate_level = 1;           ///< 0: no compression; 1..9: deflate (skipped if the filter is absent)
  const std::vector<Value>* x = nullptr;  ///< optional vector stored as <group>/x (length cols)
  const std::vector<Value>* y = nullptr;  ///< optional vector stored as <group>/y (length rows)
  std::string description;         ///< optional string attribute "description" (provenance)
};

/// Reads the CSR matrix in `group` of the HDF5 file `path`. Indices are read from the stored integer
/// type (int32 or int64, any byte order) and converted to Index (io_error if a value does not fit);
/// values from float32 or float64, converted to Value (rounding to nearest; a value beyond Value's range
/// and NaN/Inf, unless options.allow_nonfinite, are refused naming the dataset index). The declared
/// sizes are checked against the host memory the process may use before anything is allocated. The
/// result is validated (structure, column range). Throws io_error naming the file, the dataset or
/// attribute and the problem.
/// Not thread-safe against other HDF5 users unless HDF5 is built thread-safe.
///
/// Example:
///   auto a = sparse::read_hdf5<float, std::int32_t>("data/sparse/west0479.h5");
///   auto x = sparse::read_hdf5_vector<float>("data/sparse/west0479.h5", "/matrix/x");  // optional
template <class Value, class Index>
host_csr<Value, Index> read_hdf5(const std::string& path, const std::string& group = "/matrix",
                                 const read_options& options = {});

/// The header of the CSR matrix in `group`: shape and stored entries (attributes and the extent of
/// `values`; no data is read). io_error as read_hdf5.
struct hdf5_csr_info {
  std::int64_t rows = 0;
  std::int64_t cols = 0;
  std::int64_t nnz = 0;
};
hdf5_csr_info read_hdf5_info(const std::string& path, const std::string& group = "/matrix");

/// row_ptr[row_begin .. row_end] (row_end - row_begin + 1 entries, as stored: not rebased), read as one
/// hyperslab. std::invalid_argument for rows outside [0, rows]; io_error as read_hdf5.
std::vector<std::int64_t> read_hdf5_row_ptr(const std::string& path, const std::string& group,
                                            std::int64_t row_begin, std::int64_t row_end);

/// Rows [row_begin, row_end) of the CSR matrix in `group`, reading only their entries (hyperslabs of
/// row_ptr, col_idx and values): a (row_end - row_begin) x cols matrix whose column indices are the file's
/// (global) ones. Validated like read_hdf5 (io_error naming the file, the dataset and the rows). What a
/// rank of a distributed run reads (libdist).
///
/// Example:
///   auto info = sparse::read_hdf5_info(path);
///   auto mine = sparse::read_hdf5_rows<double, std::int32_t>(path, "/matrix", begin, end);
template <class Value, class Index>
host_csr<Value, Index> read_hdf5_rows(const std::string& path, const std::string& group, std::int64_t row_begin,
                                      std::int64_t row_end, const read_options& options = {});

/// Reads a 1-D float32/float64 dataset (e.g. "/matrix/x") with the value rules of read_hdf5;
/// std::nullopt if it does not exist.
template <class Value>
std::optional<std::vector<Value>> read_hdf5_vector(const std::string& path, const std::string& dataset,
                                                   const read_options& options = {});

/// Writes `a` (and the optional vectors) with the schema above through gpukit::atomic_output (a unique temporary, fsync), then renames it to
/// `path`; on any failure the partial file is removed and io_error is thrown.
///
/// Example:
///   sparse::write_hdf5("a.h5", a);
///   sparse::hdf5_write_options<float> opt;  opt.x = &x;  sparse::write_hdf5("a.h5", a, opt);
template <class Value, class Index>
void write_hdf5(const std::string& path, const host_csr<Value, Index>& a, const hdf5_write_options<Value>& options = {});

/// True when the HDF5 library can both encode and decode deflate (H5Zfilter_avail + H5Zget_filter_info).
bool hdf5_deflate_available();

}  // namespace sparse
