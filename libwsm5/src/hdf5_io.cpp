// HDF5 reader/writer of the WSM5 schema (data/README.md, "WSM5 columns"), HDF5 C API (1.10 or newer).
#include <hdf5.h>

#include <cstdint>
#include <cstdio>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "gpukit/atomic_file.hpp"
#include "gpukit/hdf5_handle.hpp"
#include "wsm5/wsm5.hpp"

namespace wsm5 {
namespace {

using gpukit::hdf5::handle;
using quiet_hdf5 = gpukit::hdf5::quiet_errors;

std::string shape_text(const std::vector<hsize_t>& s) {
  std::string t = "(";
  for (std::size_t i = 0; i < s.size(); ++i) t += (i ? ", " : "") + std::to_string(s[i]);
  return t + ")";
}

/// One dataset of the schema, opened once: its handle and its shape, whose element count fits int64.
struct schema_dataset {
  handle ds;
  std::vector<hsize_t> shape;
};

schema_dataset open_dataset(hid_t file, const std::string& path, const std::string& name) {
  if (H5Lexists(file, name.c_str(), H5P_DEFAULT) <= 0)
    throw std::runtime_error(path + ": missing dataset '" + name + "'");
  handle ds(H5Dopen2(file, name.c_str(), H5P_DEFAULT), H5Dclose);
  if (!ds.valid()) throw std::runtime_error(path + ": '" + name + "' is not a dataset");
  handle space(H5Dget_space(ds.get()), H5Sclose);
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0) throw std::runtime_error(path + ": cannot read the shape of dataset '" + name + "'");
  std::vector<hsize_t> dims(static_cast<std::size_t>(rank));
  if (rank > 0) H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  // The element count must fit int64 (the domain's index type; 2^64 cells overflowed cells()).
  std::uint64_t elements = 1;
  for (hsize_t n : dims)
    if (__builtin_mul_overflow(elements, static_cast<std::uint64_t>(n), &elements) ||
        elements > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()))
      throw std::runtime_error(path + ": dataset '" + name + "' declares more elements than fit 64 bits");
  return {std::move(ds), std::move(dims)};
}

/// Every element of a field must be stored in the file (gpukit::hdf5::stored_data_shortfall says what
/// that takes), checked before anything is allocated for its shape.
void require_stored(const schema_dataset& f, const std::string& path, const std::string& name,
                    std::uint64_t elements) {
  if (auto why = gpukit::hdf5::stored_data_shortfall(f.ds.get(), elements))
    throw std::runtime_error(path + ": dataset '" + name + "' " + *why);
}

/// The n values of a float32 (or float64) dataset, each of them stored in the file (require_stored).
std::vector<float> read_floats(const schema_dataset& f, const std::string& path, const std::string& name,
                               std::size_t n) {
  require_stored(f, path, name, n);
  handle type(H5Dget_type(f.ds.get()), H5Tclose);
  if (H5Tget_class(type.get()) != H5T_FLOAT)
    throw std::runtime_error(path + ": dataset '" + name + "' is not floating-point (the schema stores float32)");
  if (gpukit::hdf5::schema_element_size(type.get()) == 0)
    throw std::runtime_error(path + ": dataset '" + name + "' has a " + std::to_string(H5Tget_size(type.get())) +
                             "-byte float type (the schema stores float32; float64 is read too)");
  std::vector<float> v(n);
  if (n > 0 && H5Dread(f.ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, v.data()) < 0)
    throw std::runtime_error(path + ": cannot read dataset '" + name + "'");
  return v;
}

void write_floats(hid_t file, const std::string& path, const std::string& name, const std::vector<hsize_t>& dims,
                  const float* data) {
  handle space(H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr), H5Sclose);
  // No object timestamps: the same state gives the same file bytes (a distributed run's output is
  // compared byte for byte with one process's).
  handle dcpl(H5Pcreate(H5P_DATASET_CREATE), H5Pclose);
  if (!dcpl.valid() || H5Pset_obj_track_times(dcpl.get(), false) < 0)
    throw std::runtime_error(path + ": cannot set up dataset '" + name + "'");
  handle ds(H5Dcreate2(file, name.c_str(), H5T_IEEE_F32LE, space.get(), H5P_DEFAULT, dcpl.get(), H5P_DEFAULT),
            H5Dclose);
  if (!space.valid() || !ds.valid()) throw std::runtime_error(path + ": cannot create dataset '" + name + "'");
  if (H5Dwrite(ds.get(), H5T_NATIVE_FLOAT, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)
    throw std::runtime_error(path + ": cannot write dataset '" + name + "'");
}

}  // namespace

domain read_hdf5(const std::string& path) {
  quiet_hdf5 quiet;
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) throw std::runtime_error(path + ": cannot open file");
    std::fclose(f);
    throw std::runtime_error(path + ": not an HDF5 file");
  }
  handle file(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), H5Fclose);
  if (!file.valid()) throw std::runtime_error(path + ": cannot open HDF5 file");

  domain d;
  // dt: a numeric scalar attribute of the root group.
  if (H5Aexists(file.get(), "dt") <= 0) throw std::runtime_error(path + ": missing attribute 'dt' (time step, s)");
  {
    handle a(H5Aopen(file.get(), "dt", H5P_DEFAULT), H5Aclose);
    double dt = 0;
    handle space(H5Aget_space(a.get()), H5Sclose);
    handle type(H5Aget_type(a.get()), H5Tclose);
    if (!a.valid() || H5Sget_simple_extent_npoints(space.get()) != 1 || !type.valid() ||
        gpukit::hdf5::schema_element_size(type.get()) == 0 || H5Aread(a.get(), H5T_NATIVE_DOUBLE, &dt) < 0)
      throw std::runtime_error(path + ": attribute 'dt' must be one number");
    d.dt = static_cast<float>(dt);
  }
  // The shape comes from p: (ny, nz, nx) or (columns, nz).
  schema_dataset p = open_dataset(file.get(), path, "p");
  const std::vector<hsize_t> shape = p.shape;
  std::int64_t nx = 0, ny = 0, nz = 0;
  if (shape.size() == 3) {
    ny = static_cast<std::int64_t>(shape[0]);
    nz = static_cast<std::int64_t>(shape[1]);
    nx = static_cast<std::int64_t>(shape[2]);
  } else if (shape.size() == 2) {
    nx = static_cast<std::int64_t>(shape[0]);
    ny = 1;
    nz = static_cast<std::int64_t>(shape[1]);
    d.columns_form = true;
  } else {
    throw std::runtime_error(path + ": dataset 'p' has shape " + shape_text(shape) +
                             ", expected (ny, nz, nx) or (columns, nz)");
  }
  for (hsize_t s : shape)
    if (s > static_cast<hsize_t>(INT64_MAX))
      throw std::runtime_error(path + ": dataset 'p' has shape " + shape_text(shape) + ", beyond 64-bit sizes");
  std::int64_t cells = 0;  // an overflowing product is refused by resize() below, naming the shape
  if (!__builtin_mul_overflow(nx, ny, &cells) && !__builtin_mul_overflow(cells, nz, &cells))
    require_stored(p, path, "p", static_cast<std::uint64_t>(cells));  // before the domain is allocated for p's shape
  try {
    d.resize(nx, ny, nz);
  } catch (const std::invalid_argument& e) {
    throw std::runtime_error(path + ": " + e.what() + " (dataset 'p' has shape " + shape_text(shape) + ")");
  }
  for (const auto& n : field_names_3d()) {
    const schema_dataset ds = n == "p" ? std::move(p) : open_dataset(file.get(), path, n);  // p: opened once
    if (ds.shape != shape)
      throw std::runtime_error(path + ": dataset '" + n + "' has shape " + shape_text(ds.shape) + ", expected " +
                               shape_text(shape) + " like 'p'");
    auto v = read_floats(ds, path, n, static_cast<std::size_t>(d.cells()));
    auto& f = field(d, n);
    if (d.columns_form) {  // file (columns, nz) -> internal (1, nz, columns)
      for (std::int64_t c = 0; c < nx; ++c)
        for (std::int64_t k = 0; k < nz; ++k) f[static_cast<std::size_t>(d.at(c, k, 0))] = v[static_cast<std::size_t>(c * nz + k)];
    } else {
      f = std::move(v);
    }
  }
  const std::vector<hsize_t> shape2 = d.columns_form ? std::vector<hsize_t>{shape[0]} : std::vector<hsize_t>{shape[0], shape[2]};
  for (const auto& n : field_names_2d()) {
    const bool required = n == "rain" || n == "snow";
    if (!required && H5Lexists(file.get(), n.c_str(), H5P_DEFAULT) <= 0) continue;  // outputs: optional on input
    const schema_dataset ds = open_dataset(file.get(), path, n);
    if (ds.shape != shape2)
      throw std::runtime_error(path + ": dataset '" + n + "' has shape " + shape_text(ds.shape) + ", expected " +
                               shape_text(shape2));
    field(d, n) = read_floats(ds, path, n, static_cast<std::size_t>(d.columns()));
  }
  d.validate(path);               // structure: sizes, finite values, positive p/den/delz/pii
  check_physical_or_throw(d, path);  // physics: validate.hpp's bounds, before any compute
  return d;
}

void write_hdf5(const domain& d, const std::string& path, bool with_outputs) {
  quiet_hdf5 quiet;
  gpukit::atomic_output out(path);
  // The file id is closed by hand (not a handle): after a failed write it must go through
  // close_failed_write, or libhdf5's exit-time cleanup crashes on it.
  const hid_t file_id = H5Fcreate(out.temp().c_str(), H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file_id < 0) throw std::runtime_error(path + ": cannot create file");
  try {
    handle file(file_id, nullptr);  // a view for the code below; never closes
    {
      handle space(H5Screate(H5S_SCALAR), H5Sclose);
      handle a(H5Acreate2(file.get(), "dt", H5T_IEEE_F64LE, space.get(), H5P_DEFAULT, H5P_DEFAULT), H5Aclose);
      const double dt = d.dt;
      if (!a.valid() || H5Awrite(a.get(), H5T_NATIVE_DOUBLE, &dt) < 0)
        throw std::runtime_error(path + ": cannot write attribute 'dt'");
    }
    const auto nx = static_cast<hsize_t>(d.nx), ny = static_cast<hsize_t>(d.ny), nz = static_cast<hsize_t>(d.nz);
    const bool cols = d.columns_form && d.ny == 1;
    std::vector<float> buf;
    for (const auto& n : field_names_3d()) {
      const auto& f = field(d, n);
      if (cols) {
        buf.resize(f.size());
        for (std::int64_t c = 0; c < d.nx; ++c)
          for (std::int64_t k = 0; k < d.nz; ++k) buf[static_cast<std::size_t>(c * d.nz + k)] = f[static_cast<std::size_t>(d.at(c, k, 0))];
        write_floats(file.get(), path, n, {nx, nz}, buf.data());
      } else {
        write_floats(file.get(), path, n, {ny, nz, nx}, f.data());
      }
    }
    for (const auto& n : field_names_2d()) {
      if (!with_outputs && n != "rain" && n != "snow") continue;
      const auto& f = field(d, n);
      if (cols) write_floats(file.get(), path, n, {nx}, f.data());
      else write_floats(file.get(), path, n, {ny, nx}, f.data());
    }
    if (H5Fflush(file.get(), H5F_SCOPE_GLOBAL) < 0) throw std::runtime_error(path + ": cannot flush");
  } catch (const std::runtime_error&) {
    gpukit::hdf5::close_failed_write(file_id, out.temp());
    throw;
  }
  // Closed before commit() syncs and renames the file.
  if (H5Fclose(file_id) < 0) {
    gpukit::hdf5::close_failed_write(H5Iis_valid(file_id) > 0 ? file_id : H5I_INVALID_HID, out.temp());
    throw std::runtime_error(path + ": cannot close (disk full?)");
  }
  out.commit();
}

}  // namespace wsm5
