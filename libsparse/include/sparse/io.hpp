// Matrix files by extension: .mtx (Matrix Market) or .h5 / .hdf5 (the HDF5 schema of hdf5_io.hpp).
#pragma once
#include <string>

#include "sparse/csr.hpp"
#include "sparse/hdf5_io.hpp"
#include "sparse/matrix_market.hpp"

namespace sparse {

enum class file_format { matrix_market, hdf5 };

/// The format implied by the extension of `path` (case-insensitive .mtx, .h5, .hdf5); io_error otherwise.
file_format format_of(const std::string& path);

/// Reads a matrix from a .mtx or .h5/.hdf5 file (HDF5: group "/matrix"), with the value rules of
/// `options` (NaN/Inf refused by default). Throws io_error.
///
/// Example:
///   auto a = sparse::read_matrix<double, std::int32_t>(argv[1]);
///   a.validate();
template <class Value, class Index>
host_csr<Value, Index> read_matrix(const std::string& path, const read_options& options = {});

/// Writes a matrix to a .mtx or .h5/.hdf5 file (temp file + rename). Throws io_error.
template <class Value, class Index>
void write_matrix(const std::string& path, const host_csr<Value, Index>& a, const std::string& description = "");

}  // namespace sparse
