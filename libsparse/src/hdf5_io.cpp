// HDF5 reader/writer for the CSR schema of hdf5_io.hpp (HDF5 C API, 1.10 or newer).
#include "sparse/hdf5_io.hpp"

#include <hdf5.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <new>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "file_util.hpp"
#include "gpukit/atomic_file.hpp"
#include "gpukit/hdf5_handle.hpp"
#include "gpukit/host_memory.hpp"
#include "instantiate.hpp"

namespace sparse {
namespace {

using gpukit::hdf5::handle;
using quiet_hdf5 = gpukit::hdf5::quiet_errors;
using detail::number_text;

template <class T>
hid_t native_type() {
  if constexpr (std::is_same_v<T, float>) return H5T_NATIVE_FLOAT;
  else if constexpr (std::is_same_v<T, double>) return H5T_NATIVE_DOUBLE;
  else if constexpr (std::is_same_v<T, std::int32_t>) return H5T_NATIVE_INT32;
  else return H5T_NATIVE_INT64;
}

std::string join(const std::string& group, const std::string& name) {
  return group.empty() || group.back() == '/' ? group + name : group + "/" + name;
}

/// True if every link along `path` exists (H5Lexists fails on a missing intermediate group).
bool path_exists(hid_t file, const std::string& path) {
  std::size_t pos = 0;
  while (true) {
    pos = path.find('/', pos + 1);
    const std::string prefix = path.substr(0, pos);
    if (!prefix.empty() && prefix != "/" && H5Lexists(file, prefix.c_str(), H5P_DEFAULT) <= 0) return false;
    if (pos == std::string::npos) return true;
  }
}

handle open_file(const std::string& path) {
#if H5_VERSION_GE(1, 12, 0)
  const htri_t is_hdf5 = H5Fis_accessible(path.c_str(), H5P_DEFAULT);
#else
  const htri_t is_hdf5 = H5Fis_hdf5(path.c_str());
#endif
  if (is_hdf5 <= 0) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw io_error(path + ": cannot open for reading");
    std::fclose(f);
    throw io_error(path + ": not an HDF5 file");
  }
  handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) throw io_error(path + ": HDF5 cannot open the file (truncated or corrupt?)");
  return file;
}

/// Opens a 1-D dataset and returns it with its length; io_error naming the dataset otherwise.
handle open_1d(hid_t file, const std::string& path, const std::string& name, std::int64_t& length) {
  if (!path_exists(file, name)) throw io_error(path + ": missing dataset " + name);
  handle ds(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!ds.valid()) throw io_error(path + ": " + name + " is not a dataset");
  handle space(H5Dget_space(ds.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank != 1) throw io_error(path + ": dataset " + name + " has rank " + std::to_string(rank) + ", expected 1");
  hsize_t dim = 0;
  H5Sget_simple_extent_dims(space.get(), &dim, nullptr);
  if (dim > static_cast<hsize_t>(std::numeric_limits<std::int64_t>::max()))
    throw io_error(path + ": dataset " + name + " declares " + std::to_string(dim) + " entries, beyond 64-bit sizes");
  // Every entry stored in the file, before anything is allocated for the declared length.
  if (auto why = gpukit::hdf5::stored_data_shortfall(ds.get(), dim)) throw io_error(path + ": dataset " + name + " " + *why);
  length = static_cast<std::int64_t>(dim);
  return ds;
}

/// A contiguous part [offset, offset + count) of a 1-D dataset; count < 0: the whole dataset.
struct slice {
  std::int64_t offset = 0;
  std::int64_t count = -1;
};

/// H5Dread of `part` of the dataset (a hyperslab of the file space) into `out` (part.count elements).
herr_t read_part(hid_t ds, hid_t mem_type, slice part, void* out) {
  if (part.offset == 0 && part.count < 0) return H5Dread(ds, mem_type, H5S_ALL, H5S_ALL, H5P_DEFAULT, out);
  handle file_space(H5Dget_space(ds), H5Sclose);
  const hsize_t start = static_cast<hsize_t>(part.offset), count = static_cast<hsize_t>(part.count);
  if (H5Sselect_hyperslab(file_space.get(), H5S_SELECT_SET, &start, nullptr, &count, nullptr) < 0) return -1;
  handle mem_space(H5Screate_simple(1, &count, nullptr), H5Sclose);
  return H5Dread(ds, mem_type, mem_space.get(), file_space.get(), H5P_DEFAULT, out);
}

/// The number of elements of `part` in a dataset of n, checking that it lies inside (io_error otherwise).
std::int64_t part_length(const std::string& path, const std::string& name, std::int64_t n, slice part) {
  if (part.count < 0) return n - part.offset;
  if (part.offset < 0 || part.offset > n || part.count > n - part.offset)
    throw io_error(path + ": dataset " + name + " has " + std::to_string(n) + " entries, entries " +
                   std::to_string(part.offset) + ".." + std::to_string(part.offset + part.count) + " were asked for");
  return part.count;
}

/// Reads an integer dataset (or `part` of it) into Index, converting from its stored integer type
/// (checked narrowing).
template <class Index>
std::vector<Index> read_indices(hid_t file, const std::string& path, const std::string& name, std::int64_t expected,
                                slice part = {}) {
  std::int64_t total = 0;
  handle ds = open_1d(file, path, name, total);
  if (total != expected)
    throw io_error(path + ": dataset " + name + " has " + std::to_string(total) + " entries, expected " + std::to_string(expected));
  const std::int64_t n = part_length(path, name, total, part);
  handle type(H5Dget_type(ds.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_INTEGER)
    throw io_error(path + ": dataset " + name + " has a non-integer dtype (expected int32 or int64)");
  const std::size_t size = H5Tget_size(type.get());
  if (gpukit::hdf5::schema_element_size(type.get()) == 0)
    throw io_error(path + ": dataset " + name + " has a " + std::to_string(size) +
                   "-byte integer dtype (expected 1, 2, 4 or 8 bytes)");
  const bool is_signed = H5Tget_sign(type.get()) == H5T_SGN_2;
  // The narrowing path below holds an int64 copy beside the result.
  const std::uint64_t bytes = gpukit::saturating_bytes(n, sizeof(std::int64_t) + sizeof(Index));
  if (auto why = gpukit::host_memory_shortfall(bytes, "its entries"))
    throw io_error(path + ": dataset " + name + " " + *why);
  std::vector<Index> out(static_cast<std::size_t>(n));
  // Stored type no wider than Index (and signed, or strictly narrower if unsigned): HDF5's conversion is exact.
  if (size < sizeof(Index) || (size == sizeof(Index) && is_signed)) {
    if (n > 0 && read_part(ds.get(), native_type<Index>(), part, out.data()) < 0)
      throw io_error(path + ": cannot read dataset " + name);
    return out;
  }
  // Wider or unsigned 64-bit: HDF5 would clip silently, so read as int64 / uint64 and check each value.
  if (is_signed) {
    std::vector<std::int64_t> wide(static_cast<std::size_t>(n));
    if (n > 0 && read_part(ds.get(), H5T_NATIVE_INT64, part, wide.data()) < 0)
      throw io_error(path + ": cannot read dataset " + name);
    for (std::size_t i = 0; i < wide.size(); ++i) {
      if (wide[i] > std::numeric_limits<Index>::max() || wide[i] < std::numeric_limits<Index>::min())
        throw io_error(path + ": " + name + "[" + std::to_string(part.offset + static_cast<std::int64_t>(i)) + "] = " + std::to_string(wide[i]) +
                       " does not fit the " + std::to_string(8 * sizeof(Index)) + "-bit index type");
      out[i] = static_cast<Index>(wide[i]);
    }
  } else {
    std::vector<std::uint64_t> wide(static_cast<std::size_t>(n));
    if (n > 0 && read_part(ds.get(), H5T_NATIVE_UINT64, part, wide.data()) < 0)
      throw io_error(path + ": cannot read dataset " + name);
    for (std::size_t i = 0; i < wide.size(); ++i) {
      if (wide[i] > static_cast<std::uint64_t>(std::numeric_limits<Index>::max()))
        throw io_error(path + ": " + name + "[" + std::to_string(part.offset + static_cast<std::int64_t>(i)) + "] = " + std::to_string(wide[i]) +
                       " does not fit the " + std::to_string(8 * sizeof(Index)) + "-bit index type");
      out[i] = static_cast<Index>(wide[i]);
    }
  }
  return out;
}

/// Reads a float32/float64 dataset into Value: read as double (HDF5's own double -> float conversion
/// gives no word of an overflow), each value checked (finite unless allowed, within Value's range), then
/// rounded to nearest.
template <class Value>
std::vector<Value> read_values(hid_t file, const std::string& path, const std::string& name, std::int64_t expected,
                               const read_options& options, slice part = {}) {
  std::int64_t total = 0;
  handle ds = open_1d(file, path, name, total);
  if (expected >= 0 && total != expected)
    throw io_error(path + ": dataset " + name + " has " + std::to_string(total) + " entries, expected " + std::to_string(expected));
  const std::int64_t n = part_length(path, name, total, part);
  handle type(H5Dget_type(ds.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_FLOAT)
    throw io_error(path + ": dataset " + name + " has a non-float dtype (expected float32 or float64)");
  if (gpukit::hdf5::schema_element_size(type.get()) == 0)
    throw io_error(path + ": dataset " + name + " has a " + std::to_string(H5Tget_size(type.get())) +
                   "-byte float dtype (expected float32 or float64)");
  const std::uint64_t bytes = gpukit::saturating_bytes(n, sizeof(double) + sizeof(Value));  // double copy + result
  if (auto why = gpukit::host_memory_shortfall(bytes, "its entries"))
    throw io_error(path + ": dataset " + name + " " + *why);
  std::vector<double> wide(static_cast<std::size_t>(n));
  if (n > 0 && read_part(ds.get(), H5T_NATIVE_DOUBLE, part, wide.data()) < 0)
    throw io_error(path + ": cannot read dataset " + name);
  std::vector<Value> out(wide.size());
  for (std::size_t i = 0; i < wide.size(); ++i) {
    const double v = wide[i];
    if (!std::isfinite(v) && !options.allow_nonfinite)
      throw io_error(path + ": " + name + "[" + std::to_string(part.offset + static_cast<std::int64_t>(i)) +
                     "] = " + number_text(v) + " is not finite (NaN and Inf are refused unless allowed)");
    out[i] = static_cast<Value>(v);
    if (std::isfinite(v) && !std::isfinite(out[i]))
      throw io_error(path + ": " + name + "[" + std::to_string(part.offset + static_cast<std::int64_t>(i)) +
                     "] = " + number_text(v) + " overflows float (largest 3.4028235e+38); read it as double");
  }
  return out;
}

constexpr std::size_t max_string_attr_bytes = 4096;

/// Reads a string attribute (fixed or variable length); io_error if missing or not a string.
std::string read_string_attr(hid_t obj, const std::string& path, const std::string& where, const char* name) {
  if (H5Aexists(obj, name) <= 0) throw io_error(path + ": " + where + " has no attribute '" + name + "'");
  handle attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  handle type(H5Aget_type(attr.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_STRING)
    throw io_error(path + ": attribute " + where + "." + name + " is not a string");
  std::string out;
  if (H5Tis_variable_str(type.get()) > 0) {
    handle mem(H5Tcopy(H5T_C_S1), H5Tclose);
    H5Tset_size(mem.get(), H5T_VARIABLE);
    H5Tset_cset(mem.get(), H5Tget_cset(type.get()));
    char* s = nullptr;
    if (H5Aread(attr.get(), mem.get(), &s) < 0) throw io_error(path + ": cannot read attribute " + where + "." + name);
    if (s) out = s;
    handle space(H5Aget_space(attr.get()), H5Sclose);
#if H5_VERSION_GE(1, 12, 0)
    H5Treclaim(mem.get(), space.get(), H5P_DEFAULT, &s);  // H5Dvlen_reclaim is deprecated from 1.12
#else
    H5Dvlen_reclaim(mem.get(), space.get(), H5P_DEFAULT, &s);
#endif
  } else {
    // The schema's strings are names ("csr", a version): a fixed length past 4 KiB is a corrupted
    // datatype message, refused before the buffer is sized from it.
    const std::size_t size = H5Tget_size(type.get());
    if (size > max_string_attr_bytes)
      throw io_error(path + ": attribute " + where + "." + name + " declares a " + std::to_string(size) +
                     "-byte string (at most " + std::to_string(max_string_attr_bytes) + ")");
    std::vector<char> buf(size + 1, '\0');
    if (H5Aread(attr.get(), type.get(), buf.data()) < 0) throw io_error(path + ": cannot read attribute " + where + "." + name);
    out.assign(buf.data());  // stops at the first NUL (nullpad / nullterm)
  }
  return out;
}

/// Reads an integer attribute of `count` elements as int64.
std::vector<std::int64_t> read_int_attr(hid_t obj, const std::string& path, const std::string& where, const char* name,
                                        std::size_t count) {
  if (H5Aexists(obj, name) <= 0) throw io_error(path + ": " + where + " has no attribute '" + name + "'");
  handle attr(H5Aopen(obj, name, H5P_DEFAULT), H5Aclose);
  handle type(H5Aget_type(attr.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_INTEGER || gpukit::hdf5::schema_element_size(type.get()) == 0)
    throw io_error(path + ": attribute " + where + "." + name + " is not an integer of 1, 2, 4 or 8 bytes");
  handle space(H5Aget_space(attr.get()), H5Sclose);
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  if (n != static_cast<hssize_t>(count))
    throw io_error(path + ": attribute " + where + "." + name + " has " + std::to_string(n) + " elements, expected " +
                   std::to_string(count));
  std::vector<std::int64_t> v(count);
  if (H5Aread(attr.get(), H5T_NATIVE_INT64, v.data()) < 0) throw io_error(path + ": cannot read attribute " + where + "." + name);
  return v;
}

void write_string_attr(hid_t obj, const char* name, const std::string& value) {
  // Variable-length UTF-8: h5py returns it as str.
  handle type(H5Tcopy(H5T_C_S1), H5Tclose);
  H5Tset_size(type.get(), H5T_VARIABLE);
  H5Tset_cset(type.get(), H5T_CSET_UTF8);
  handle space(H5Screate(H5S_SCALAR), H5Sclose);
  handle attr(H5Acreate2(obj, name, type.get(), space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  const char* s = value.c_str();
  if (!attr.valid() || H5Awrite(attr.get(), type.get(), &s) < 0) throw std::runtime_error(std::string("attribute ") + name);
}

void write_int_attr(hid_t obj, const char* name, const std::vector<std::int64_t>& v) {
  const hsize_t dim = v.size();
  handle space(v.size() == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &dim, nullptr), H5Sclose);
  handle attr(H5Acreate2(obj, name, H5T_STD_I64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
  if (!attr.valid() || H5Awrite(attr.get(), H5T_NATIVE_INT64, v.data()) < 0)
    throw std::runtime_error(std::string("attribute ") + name);
}

// Chunking pays off (and compression applies) only past ~64K elements; 256K-element chunks (1-2 MiB)
// keep per-chunk overhead under 0.1% and still let h5py read a slice without inflating everything.
constexpr std::int64_t chunk_threshold = 1 << 16;
constexpr hsize_t chunk_elements = 1 << 18;

template <class T>
void write_dataset(hid_t group, const char* name, hid_t file_type, const T* data, std::int64_t n, int deflate_level) {
  const hsize_t dim = static_cast<hsize_t>(n);
  handle space(H5Screate_simple(1, &dim, nullptr), H5Sclose);
  handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (n > chunk_threshold) {
    const hsize_t chunk = std::min<hsize_t>(chunk_elements, dim);
    H5Pset_chunk(dcpl.get(), 1, &chunk);
    if (deflate_level > 0 && hdf5_deflate_available()) {
      H5Pset_shuffle(dcpl.get());  // byte shuffle: sorted indices then compress 3-5x instead of ~1.5x
      H5Pset_deflate(dcpl.get(), static_cast<unsigned>(std::min(deflate_level, 9)));
    }
  }
  handle ds(H5Dcreate2(group, name, file_type, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT), H5Dclose);
  if (!ds.valid()) throw std::runtime_error(std::string("cannot create dataset ") + name);
  if (n > 0 && H5Dwrite(ds.get(), native_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    throw std::runtime_error(std::string("cannot write dataset ") + name);
}

template <class T>
hid_t file_type_of() {
  if constexpr (std::is_same_v<T, float>) return H5T_IEEE_F32LE;
  else if constexpr (std::is_same_v<T, double>) return H5T_IEEE_F64LE;
  else if constexpr (std::is_same_v<T, std::int32_t>) return H5T_STD_I32LE;
  else return H5T_STD_I64LE;
}

}  // namespace

bool hdf5_deflate_available() {
  if (H5Zfilter_avail(H5Z_FILTER_DEFLATE) <= 0) return false;
  unsigned int config = 0;
  if (H5Zget_filter_info(H5Z_FILTER_DEFLATE, &config) < 0) return false;
  return (config & H5Z_FILTER_CONFIG_ENCODE_ENABLED) && (config & H5Z_FILTER_CONFIG_DECODE_ENABLED);
}

namespace {
/// The open file and the checked header of its CSR group: format, shape, index_base, nnz (the extent of
/// values). io_error naming the file and the attribute or dataset otherwise.
struct csr_header {
  handle file;
  hdf5_csr_info info;
};
csr_header open_csr(const std::string& path, const std::string& group_name) {
  csr_header h{open_file(path), {}};
  if (!path_exists(h.file.get(), group_name)) throw io_error(path + ": missing group " + group_name);
  handle group(H5Gopen2(h.file.get(), group_name.c_str(), H5P_DEFAULT), H5Gclose);
  if (!group.valid()) throw io_error(path + ": " + group_name + " is not a group");
  const std::string format = read_string_attr(group.get(), path, group_name, "format");
  if (format != "csr") throw io_error(path + ": " + group_name + ".format is '" + format + "', expected 'csr'");
  const auto shape = read_int_attr(group.get(), path, group_name, "shape", 2);
  const auto base = read_int_attr(group.get(), path, group_name, "index_base", 1);
  if (base[0] != 0)
    throw io_error(path + ": " + group_name + ".index_base is " + std::to_string(base[0]) + ", only 0 is supported");
  h.info.rows = shape[0];
  h.info.cols = shape[1];
  if (h.info.rows < 0 || h.info.cols < 0)
    throw io_error(path + ": " + group_name + ".shape is negative (" + std::to_string(h.info.rows) + ", " +
                   std::to_string(h.info.cols) + ")");
  handle v = open_1d(h.file.get(), path, join(group_name, "values"), h.info.nnz);
  return h;
}

template <class Index>
void check_shape_fits(const std::string& path, const std::string& group_name, std::int64_t rows, std::int64_t cols) {
  if (rows >= std::numeric_limits<Index>::max() || cols > std::numeric_limits<Index>::max())
    throw io_error(path + ": " + group_name + ".shape (" + std::to_string(rows) + ", " + std::to_string(cols) +
                   ") does not fit the " + std::to_string(8 * sizeof(Index)) + "-bit index type");
}
}  // namespace

template <class Value, class Index>
host_csr<Value, Index> read_hdf5(const std::string& path, const std::string& group_name, const read_options& options) {
  quiet_hdf5 quiet;
  csr_header h = open_csr(path, group_name);
  const std::int64_t rows = h.info.rows, cols = h.info.cols, nnz = h.info.nnz;
  check_shape_fits<Index>(path, group_name, rows, cols);
  auto row_ptr = read_indices<Index>(h.file.get(), path, join(group_name, "row_ptr"), rows + 1);
  auto col_idx = read_indices<Index>(h.file.get(), path, join(group_name, "col_idx"), nnz);
  auto values = read_values<Value>(h.file.get(), path, join(group_name, "values"), nnz, options);
  try {
    host_csr<Value, Index> a(rows, cols, std::move(row_ptr), std::move(col_idx), std::move(values));
    a.validate();
    return a;
  } catch (const invalid_matrix& e) {
    throw io_error(path + ": " + group_name + " is not a valid CSR matrix: " + e.what());
  }
}

hdf5_csr_info read_hdf5_info(const std::string& path, const std::string& group_name) {
  quiet_hdf5 quiet;
  return open_csr(path, group_name).info;
}

std::vector<std::int64_t> read_hdf5_row_ptr(const std::string& path, const std::string& group_name,
                                            std::int64_t row_begin, std::int64_t row_end) {
  quiet_hdf5 quiet;
  csr_header h = open_csr(path, group_name);
  if (row_begin < 0 || row_begin > row_end || row_end > h.info.rows)
    throw std::invalid_argument(path + ": rows " + std::to_string(row_begin) + ".." + std::to_string(row_end) +
                                " asked of a matrix of " + std::to_string(h.info.rows) + " rows");
  return read_indices<std::int64_t>(h.file.get(), path, join(group_name, "row_ptr"), h.info.rows + 1,
                                    slice{row_begin, row_end - row_begin + 1});
}

template <class Value, class Index>
host_csr<Value, Index> read_hdf5_rows(const std::string& path, const std::string& group_name, std::int64_t row_begin,
                                      std::int64_t row_end, const read_options& options) {
  quiet_hdf5 quiet;
  csr_header h = open_csr(path, group_name);
  const std::int64_t rows = row_end - row_begin;
  check_shape_fits<Index>(path, group_name, rows, h.info.cols);
  if (row_begin < 0 || rows < 0 || row_end > h.info.rows)
    throw std::invalid_argument(path + ": rows " + std::to_string(row_begin) + ".." + std::to_string(row_end) +
                                " asked of a matrix of " + std::to_string(h.info.rows) + " rows");
  const std::string rp_name = join(group_name, "row_ptr");
  auto rp = read_indices<std::int64_t>(h.file.get(), path, rp_name, h.info.rows + 1, slice{row_begin, rows + 1});
  const std::int64_t first = rp.front(), last = rp.back();
  if (first < 0 || last < first || last > h.info.nnz)
    throw io_error(path + ": " + rp_name + " gives entries " + std::to_string(first) + ".." + std::to_string(last) +
                   " for rows " + std::to_string(row_begin) + ".." + std::to_string(row_end) + " of " +
                   std::to_string(h.info.nnz) + " stored");
  std::vector<Index> row_ptr(rp.size());
  for (std::size_t i = 0; i < rp.size(); ++i) {
    const std::int64_t v = rp[i] - first;  // rebased; validate() below checks the monotonicity
    if (v > std::numeric_limits<Index>::max() || v < 0)
      throw io_error(path + ": " + rp_name + "[" + std::to_string(row_begin + static_cast<std::int64_t>(i)) + "] = " +
                     std::to_string(rp[i]) + " is out of the range of the rows' entries");
    row_ptr[i] = static_cast<Index>(v);
  }
  auto col_idx = read_indices<Index>(h.file.get(), path, join(group_name, "col_idx"), h.info.nnz, slice{first, last - first});
  auto values = read_values<Value>(h.file.get(), path, join(group_name, "values"), h.info.nnz, options,
                                   slice{first, last - first});
  try {
    host_csr<Value, Index> a(rows, h.info.cols, std::move(row_ptr), std::move(col_idx), std::move(values));
    a.validate();
    return a;
  } catch (const invalid_matrix& e) {
    throw io_error(path + ": " + group_name + " rows " + std::to_string(row_begin) + ".." + std::to_string(row_end) +
                   " are not a valid CSR block: " + e.what());
  }
}

template <class Value>
std::optional<std::vector<Value>> read_hdf5_vector(const std::string& path, const std::string& dataset,
                                                   const read_options& options) {
  quiet_hdf5 quiet;
  handle file = open_file(path);
  if (!path_exists(file.get(), dataset)) return std::nullopt;
  return read_values<Value>(file.get(), path, dataset, -1, options);
}

template <class Value, class Index>
void write_hdf5(const std::string& path, const host_csr<Value, Index>& a, const hdf5_write_options<Value>& options) {
  try {
    a.validate();
  } catch (const invalid_matrix& e) {
    throw io_error(path + ": not written, the matrix is invalid: " + e.what());
  }
  if (options.x && static_cast<std::int64_t>(options.x->size()) != a.cols())
    throw io_error(path + ": not written, x has " + std::to_string(options.x->size()) + " entries, expected cols = " +
                   std::to_string(a.cols()));
  if (options.y && static_cast<std::int64_t>(options.y->size()) != a.rows())
    throw io_error(path + ": not written, y has " + std::to_string(options.y->size()) + " entries, expected rows = " +
                   std::to_string(a.rows()));
  quiet_hdf5 quiet;
  gpukit::atomic_output pf(path);
  // The file id is closed by hand (not a handle): after a failed write it must go through
  // close_failed_write, or libhdf5's exit-time cleanup crashes on it.
  const hid_t file_id = H5Fcreate(pf.temp().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file_id < 0) throw io_error(path + ": HDF5 write failed: cannot create " + pf.temp());
  try {
    handle file(file_id, nullptr);  // a view for the code below; never closes
    handle lcpl(H5Pcreate(H5P_LINK_CREATE), H5Pclose);
    H5Pset_create_intermediate_group(lcpl.get(), 1);
    handle group;
    if (options.group.empty() || options.group == "/") group = handle(H5Gopen2(file.get(), "/", H5P_DEFAULT), H5Gclose);
    else group = handle(H5Gcreate2(file.get(), options.group.c_str(), lcpl.get(), H5P_DEFAULT, H5P_DEFAULT), H5Gclose);
    if (!group.valid()) throw std::runtime_error("cannot create group " + options.group);
    write_string_attr(group.get(), "format", "csr");
    write_int_attr(group.get(), "shape", {a.rows(), a.cols()});
    write_int_attr(group.get(), "index_base", {0});
    if (!options.description.empty()) write_string_attr(group.get(), "description", options.description);
    write_dataset(group.get(), "row_ptr", file_type_of<Index>(), a.row_ptr().data(), a.rows() + 1, options.deflate_level);
    write_dataset(group.get(), "col_idx", file_type_of<Index>(), a.col_idx().data(), a.nnz(), options.deflate_level);
    write_dataset(group.get(), "values", file_type_of<Value>(), a.values().data(), a.nnz(), options.deflate_level);
    if (options.x)
      write_dataset(group.get(), "x", file_type_of<Value>(), options.x->data(), a.cols(), options.deflate_level);
    if (options.y)
      write_dataset(group.get(), "y", file_type_of<Value>(), options.y->data(), a.rows(), options.deflate_level);
    group.reset();
    if (H5Fflush(file.get(), H5F_SCOPE_GLOBAL) < 0) throw std::runtime_error("flush failed (disk full?)");
  } catch (const std::runtime_error& e) {
    gpukit::hdf5::close_failed_write(file_id, pf.temp());
    throw io_error(path + ": HDF5 write failed: " + e.what());
  }
  if (H5Fclose(file_id) < 0) {
    gpukit::hdf5::close_failed_write(H5Iis_valid(file_id) > 0 ? file_id : H5I_INVALID_HID, pf.temp());
    throw io_error(path + ": HDF5 write failed: close failed (disk full?)");
  }
  try {
    pf.commit();
  } catch (const std::runtime_error& e) {
    throw io_error(e.what());
  }
}

#define SPARSE_H5_INSTANTIATE(V, I)                                                             \
  template host_csr<V, I> read_hdf5<V, I>(const std::string&, const std::string&, const read_options&); \
  template host_csr<V, I> read_hdf5_rows<V, I>(const std::string&, const std::string&, std::int64_t, std::int64_t, \
                                               const read_options&);                                              \
  template void write_hdf5<V, I>(const std::string&, const host_csr<V, I>&, const hdf5_write_options<V>&);
SPARSE_FOR_EACH_VALUE_INDEX(SPARSE_H5_INSTANTIATE)
#undef SPARSE_H5_INSTANTIATE
template std::optional<std::vector<float>> read_hdf5_vector<float>(const std::string&, const std::string&,
                                                                   const read_options&);
template std::optional<std::vector<double>> read_hdf5_vector<double>(const std::string&, const std::string&,
                                                                     const read_options&);

}  // namespace sparse
