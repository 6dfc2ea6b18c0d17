// Matrix files by extension.
#include "sparse/io.hpp"

#include <algorithm>
#include <cctype>

#include "instantiate.hpp"

namespace sparse {

file_format format_of(const std::string& path) {
  auto ends_with = [&](const std::string& ext) {
    if (path.size() < ext.size()) return false;
    return std::equal(ext.rbegin(), ext.rend(), path.rbegin(),
                      [](char a, char b) { return a == std::tolower(static_cast<unsigned char>(b)); });
  };
  if (ends_with(".mtx")) return file_format::matrix_market;
  if (ends_with(".h5") || ends_with(".hdf5")) return file_format::hdf5;
  throw io_error(path + ": unknown file type (expected .mtx, .h5 or .hdf5)");
}

template <class Value, class Index>
host_csr<Value, Index> read_matrix(const std::string& path, const read_options& options) {
  return format_of(path) == file_format::matrix_market ? read_matrix_market<Value, Index>(path, options)
                                                       : read_hdf5<Value, Index>(path, "/matrix", options);
}

template <class Value, class Index>
void write_matrix(const std::string& path, const host_csr<Value, Index>& a, const std::string& description) {
  if (format_of(path) == file_format::matrix_market) {
    write_matrix_market(path, a, description);
  } else {
    hdf5_write_options<Value> opt;
    opt.description = description;
    write_hdf5(path, a, opt);
  }
}

#define SPARSE_IO_INSTANTIATE(V, I)                                   \
  template host_csr<V, I> read_matrix<V, I>(const std::string&, const read_options&); \
  template void write_matrix<V, I>(const std::string&, const host_csr<V, I>&, const std::string&);
SPARSE_FOR_EACH_VALUE_INDEX(SPARSE_IO_INSTANTIATE)
#undef SPARSE_IO_INSTANTIATE

}  // namespace sparse
