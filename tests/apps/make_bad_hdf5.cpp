// Writes the HDF5 files of the bad-input corpus (tests/data/bad/MANIFEST.tsv refers to them as
// $GEN/NAME.h5) into the folder given as argv[1]: CSR matrices and WSM5 domains, each broken in one
// way. Run by CTest as the fixture of the corpus cases (tests/apps/bad_inputs.cmake), so no binary file
// is committed and every file can be read here.
#include <hdf5.h>

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

namespace {

using dims_t = std::vector<hsize_t>;

[[noreturn]] void die(const std::string& what) {
  std::fprintf(stderr, "make_bad_hdf5: %s\n", what.c_str());
  std::exit(1);
}

template <class T>
hid_t mem_type() {
  if constexpr (std::is_same_v<T, float>) return H5T_NATIVE_FLOAT;
  else if constexpr (std::is_same_v<T, double>) return H5T_NATIVE_DOUBLE;
  else if constexpr (std::is_same_v<T, std::int32_t>) return H5T_NATIVE_INT32;
  else return H5T_NATIVE_INT64;
}

/// A dataset `name` of `dims` (contiguous, written from `data`), or, with `data` empty, a chunked
/// dataset that is never written: its declared shape costs no bytes (how a 7 KB file declares 2^64 cells).
template <class T>
void dataset(hid_t loc, const char* name, hid_t file_type, const dims_t& dims, const std::vector<T>& data) {
  const hid_t space = H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr);
  const hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (data.empty()) {
    const dims_t chunk(dims.size(), 1);
    H5Pset_chunk(dcpl, static_cast<int>(chunk.size()), chunk.data());
    H5Pset_alloc_time(dcpl, H5D_ALLOC_TIME_INCR);
  }
  const hid_t ds = H5Dcreate2(loc, name, file_type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (ds < 0) die(std::string("cannot create dataset ") + name);
  if (!data.empty() && H5Dwrite(ds, mem_type<T>(), H5S_ALL, H5S_ALL, H5P_DEFAULT, data.data()) < 0)
    die(std::string("cannot write dataset ") + name);
  H5Dclose(ds);
  H5Pclose(dcpl);
  H5Sclose(space);
}

/// `base` stored in `size` bytes: a float padded to 16 bytes, or an integer narrowed to 24 bits in 3.
/// HDF5 reads both, converting; the schemas name neither (float32/float64, integers of 1, 2, 4, 8 bytes).
hid_t odd_size_type(hid_t base, std::size_t size) {
  const hid_t t = H5Tcopy(base);
  if (size < H5Tget_size(base) && H5Tset_precision(t, 8 * size) < 0) die("cannot narrow a type");
  if (H5Tset_size(t, size) < 0) die("cannot resize a type");
  return t;
}

void string_attr(hid_t obj, const char* name, const std::string& value) {
  const hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  const hid_t space = H5Screate(H5S_SCALAR);
  const hid_t a = H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  const char* s = value.c_str();
  H5Awrite(a, type, &s);
  H5Aclose(a);
  H5Sclose(space);
  H5Tclose(type);
}

template <class T>
void number_attr(hid_t obj, const char* name, hid_t file_type, const std::vector<T>& v) {
  const hsize_t n = v.size();
  const hid_t space = v.size() == 1 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &n, nullptr);
  const hid_t a = H5Acreate2(obj, name, file_type, space, H5P_DEFAULT, H5P_DEFAULT);
  H5Awrite(a, mem_type<T>(), v.data());
  H5Aclose(a);
  H5Sclose(space);
}

void write_file(const std::string& path, const std::function<void(hid_t)>& fill) {
  const hid_t f = H5Fcreate(path.c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (f < 0) die("cannot create " + path);
  fill(f);
  if (H5Fclose(f) < 0) die("cannot close " + path);
}

// ---- CSR (libsparse/include/sparse/hdf5_io.hpp): the valid 3 x 3 matrix [[1 0 2] [0 3 0] [4 0 5]] ----
struct csr_parts {
  std::string format = "csr";
  std::vector<std::int64_t> shape = {3, 3}, base = {0};
  std::vector<std::int32_t> row_ptr = {0, 2, 3, 5}, col_idx = {0, 2, 1, 0, 2};
  std::vector<double> values = {1, 2, 3, 4, 5};
  bool with_format = true, with_row_ptr = true, with_values = true;
  hsize_t declared_nnz = 0;  ///< > 0: col_idx and values declare this length and hold no bytes
  std::vector<double> x;  ///< /matrix/x when not empty
};

void write_csr(const std::string& path, const csr_parts& p, const std::function<void(hid_t)>& extra = {}) {
  write_file(path, [&](hid_t f) {
    const hid_t g = H5Gcreate2(f, "matrix", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    if (p.with_format) string_attr(g, "format", p.format);
    number_attr(g, "shape", H5T_STD_I64LE, p.shape);
    number_attr(g, "index_base", H5T_STD_I64LE, p.base);
    if (p.with_row_ptr) dataset(g, "row_ptr", H5T_STD_I32LE, {p.row_ptr.size()}, p.row_ptr);
    if (p.declared_nnz > 0) {
      dataset(g, "col_idx", H5T_STD_I32LE, {p.declared_nnz}, std::vector<std::int32_t>{});
      dataset(g, "values", H5T_IEEE_F64LE, {p.declared_nnz}, std::vector<double>{});
    } else {
      dataset(g, "col_idx", H5T_STD_I32LE, {p.col_idx.size()}, p.col_idx);
      if (p.with_values) dataset(g, "values", H5T_IEEE_F64LE, {p.values.size()}, p.values);
    }
    if (!p.x.empty()) dataset(g, "x", H5T_IEEE_F64LE, {p.x.size()}, p.x);
    if (extra) extra(g);
    H5Gclose(g);
  });
}

void csr_files(const std::string& dir) {
  const auto at = [&](const char* name) { return dir + "/" + name; };
  csr_parts ok;
  write_csr(at("csr_valid.h5"), ok);
  write_file(at("csr_missing_group.h5"), [](hid_t) {});
  { auto p = ok; p.with_row_ptr = false; write_csr(at("csr_missing_row_ptr.h5"), p); }
  { auto p = ok; p.with_values = false; write_csr(at("csr_missing_values.h5"), p); }
  { auto p = ok; p.with_format = false; write_csr(at("csr_missing_format.h5"), p); }
  { auto p = ok; p.format = "coo"; write_csr(at("csr_format_coo.h5"), p); }
  { auto p = ok; p.shape = {-3, 3}; write_csr(at("csr_shape_negative.h5"), p); }
  { auto p = ok; p.shape = {std::int64_t{1} << 40, 3}; write_csr(at("csr_shape_2e40_rows.h5"), p); }
  { auto p = ok; p.base = {1}; write_csr(at("csr_index_base_one.h5"), p); }
  { auto p = ok; p.declared_nnz = hsize_t{1} << 40; write_csr(at("csr_nnz_2e40_declared.h5"), p); }
  { auto p = ok; p.row_ptr = {0, 2, 1, 5}; write_csr(at("csr_row_ptr_decreasing.h5"), p); }
  { auto p = ok; p.row_ptr = {1, 2, 3, 5}; write_csr(at("csr_row_ptr_first_not_zero.h5"), p); }
  { auto p = ok; p.row_ptr = {0, 2, 5}; write_csr(at("csr_row_ptr_short.h5"), p); }
  { auto p = ok; p.row_ptr = {0, 2, 3, 4}; write_csr(at("csr_row_ptr_end_not_nnz.h5"), p); }
  { auto p = ok; p.col_idx = {0, 3, 1, 0, 2}; write_csr(at("csr_col_past_end.h5"), p); }
  { auto p = ok; p.col_idx = {0, 2, -1, 0, 2}; write_csr(at("csr_col_negative.h5"), p); }
  { auto p = ok; p.values = {1, 2, NAN, 4, 5}; write_csr(at("csr_values_nan.h5"), p); }
  { auto p = ok; p.values = {1, 2, 3, -INFINITY, 5}; write_csr(at("csr_values_inf.h5"), p); }
  { auto p = ok; p.values = {1, 2, 1e300, 4, 5}; write_csr(at("csr_values_1e300.h5"), p); }
  { auto p = ok; p.x = {1, 2}; write_csr(at("csr_x_short.h5"), p); }
  { auto p = ok; p.x = {1, NAN, 3}; write_csr(at("csr_x_nan.h5"), p); }
  // Mistyped and misshapen datasets: written by hand beside a CSR group that lacks them.
  { auto p = ok; p.with_row_ptr = false;
    write_csr(at("csr_row_ptr_float.h5"), p, [](hid_t g) {
      dataset<double>(g, "row_ptr", H5T_IEEE_F64LE, {4}, {0, 2, 3, 5}); }); }
  { auto p = ok; p.with_values = false;
    write_csr(at("csr_values_integer.h5"), p, [](hid_t g) {
      dataset<std::int32_t>(g, "values", H5T_STD_I32LE, {5}, {1, 2, 3, 4, 5}); }); }
  { auto p = ok; p.with_values = false;
    write_csr(at("csr_values_float128.h5"), p, [](hid_t g) {
      const hid_t t = odd_size_type(H5T_IEEE_F64LE, 16);
      dataset<double>(g, "values", t, {5}, {1, 2, 3, 4, 5});
      H5Tclose(t); }); }
  { auto p = ok; p.with_row_ptr = false;
    write_csr(at("csr_row_ptr_int24.h5"), p, [](hid_t g) {
      const hid_t t = odd_size_type(H5T_STD_I32LE, 3);
      dataset<std::int32_t>(g, "row_ptr", t, {4}, {0, 2, 3, 5});
      H5Tclose(t); }); }
  { auto p = ok; p.with_row_ptr = false;
    write_csr(at("csr_row_ptr_rank2.h5"), p, [](hid_t g) {
      dataset<std::int32_t>(g, "row_ptr", H5T_STD_I32LE, {2, 2}, {0, 2, 3, 5}); }); }
  { auto p = ok; p.with_row_ptr = false;
    write_csr(at("csr_row_ptr_int64_too_big.h5"), p, [](hid_t g) {
      dataset<std::int64_t>(g, "row_ptr", H5T_STD_I64LE, {4}, {0, 2, 3, std::int64_t{1} << 40}); }); }
}

// ---- WSM5 (data/README.md "WSM5 columns"): 2 columns x 3 levels, (columns, nz) form ----
const char* const fields_3d[] = {"p", "den", "delz", "pii", "th", "qv", "qc", "qr", "qi", "qs"};

struct wsm5_parts {
  bool with_dt = true, dt_as_string = false;
  dims_t p_dims = {2, 3};
  const char* skip = "";      ///< a dataset left out
  const char* as_int = "";    ///< a 3D field stored as int32
  const char* reshaped = "";  ///< a 3D field stored as (3, 2)
  const char* padded = "";    ///< a 3D field stored as 16-byte floats
};

void write_wsm5(const std::string& path, const wsm5_parts& w) {
  write_file(path, [&](hid_t f) {
    if (w.with_dt) {
      if (w.dt_as_string) string_attr(f, "dt", "72 s");
      else number_attr<double>(f, "dt", H5T_IEEE_F64LE, {72.0});
    }
    const std::vector<float> v3(6, 1.0f), v2(2, 0.0f);
    for (const char* n : fields_3d) {
      if (std::string(n) == w.skip) continue;
      if (std::string(n) == "p") {
        hsize_t cells = 1;
        for (hsize_t d : w.p_dims) cells *= d;
        dataset(f, n, H5T_IEEE_F32LE, w.p_dims, cells == 6 ? v3 : std::vector<float>{});
      } else if (std::string(n) == w.padded) {
        const hid_t t = odd_size_type(H5T_IEEE_F32LE, 16);
        dataset(f, n, t, {2, 3}, v3);
        H5Tclose(t);
      } else if (std::string(n) == w.as_int) {
        dataset<std::int32_t>(f, n, H5T_STD_I32LE, {2, 3}, {1, 1, 1, 1, 1, 1});
      } else {
        dataset(f, n, H5T_IEEE_F32LE, std::string(n) == w.reshaped ? dims_t{3, 2} : dims_t{2, 3}, v3);
      }
    }
    for (const char* n : {"rain", "snow"})
      if (std::string(n) != w.skip) dataset(f, n, H5T_IEEE_F32LE, {2}, v2);
  });
}

void wsm5_files(const std::string& dir) {
  const auto at = [&](const char* name) { return dir + "/" + name; };
  const wsm5_parts ok;
  // (1, 2^62, 4): 2^64 cells, a product that wraps to 0 in int64 arithmetic.
  { auto w = ok; w.p_dims = {1, hsize_t{1} << 62, 4}; write_wsm5(at("wsm5_dims_overflow.h5"), w); }
  // (1000, 1000, 100000): 1e11 cells, 4.4 TB of fields: a size no host has.
  { auto w = ok; w.p_dims = {1000, 1000, 100000}; write_wsm5(at("wsm5_dims_beyond_memory.h5"), w); }
  { auto w = ok; w.p_dims = {6}; write_wsm5(at("wsm5_p_rank1.h5"), w); }
  { auto w = ok; w.with_dt = false; write_wsm5(at("wsm5_missing_dt.h5"), w); }
  { auto w = ok; w.dt_as_string = true; write_wsm5(at("wsm5_dt_string.h5"), w); }
  { auto w = ok; w.skip = "qv"; write_wsm5(at("wsm5_missing_qv.h5"), w); }
  { auto w = ok; w.skip = "rain"; write_wsm5(at("wsm5_missing_rain.h5"), w); }
  { auto w = ok; w.as_int = "qc"; write_wsm5(at("wsm5_qc_integer.h5"), w); }
  { auto w = ok; w.reshaped = "th"; write_wsm5(at("wsm5_th_reshaped.h5"), w); }
  { auto w = ok; w.padded = "qr"; write_wsm5(at("wsm5_qr_float128.h5"), w); }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) die("usage: make_bad_hdf5 OUTDIR");
  csr_files(argv[1]);
  wsm5_files(argv[1]);
  return 0;
}
