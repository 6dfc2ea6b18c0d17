// RAII for the HDF5 C API (common layer), shared by libsparse's I/O and the WSM5 library: handles that close themselves, and a
// guard that silences HDF5's own error-stack printing (callers report errors themselves, naming the file
// and dataset). Includes <hdf5.h>: for implementation files, not for the public API headers.
#pragma once
#include <hdf5.h>
#include <unistd.h>

#include <cstddef>
#include <string>
#include <utility>

namespace gpukit::hdf5 {

/// Silences HDF5's automatic error printing while alive; restores the previous handler on exit.
class quiet_errors {
public:
  quiet_errors() {
    H5Eget_auto2(H5E_DEFAULT, &func_, &data_);
    H5Eset_auto2(H5E_DEFAULT, nullptr, nullptr);
  }
  ~quiet_errors() { H5Eset_auto2(H5E_DEFAULT, func_, data_); }
  quiet_errors(const quiet_errors&) = delete;
  quiet_errors& operator=(const quiet_errors&) = delete;

private:
  H5E_auto2_t func_ = nullptr;
  void* data_ = nullptr;
};

/// An hid_t with its matching close function (H5Fclose, H5Dclose, ...); move-only.
class handle {
public:
  handle() = default;
  handle(hid_t id, herr_t (*closer)(hid_t)) : id_(id), close_(closer) {}
  handle(const handle&) = delete;
  handle& operator=(const handle&) = delete;
  handle(handle&& o) noexcept : id_(std::exchange(o.id_, H5I_INVALID_HID)), close_(o.close_) {}
  handle& operator=(handle&& o) noexcept {
    reset();
    id_ = std::exchange(o.id_, H5I_INVALID_HID);
    close_ = o.close_;
    return *this;
  }
  ~handle() { reset(); }
  /// Closes now and returns the close function's status (negative: failed, e.g. a file whose final
  /// write hit a full disk); the handle is invalid afterwards either way.
  herr_t close() {
    const herr_t status = id_ >= 0 && close_ ? close_(id_) : 0;
    id_ = H5I_INVALID_HID;
    return status;
  }
  void reset() {
    if (id_ >= 0 && close_) close_(id_);
    id_ = H5I_INVALID_HID;
  }
  hid_t get() const { return id_; }
  bool valid() const { return id_ >= 0; }

private:
  hid_t id_ = H5I_INVALID_HID;
  herr_t (*close_)(hid_t) = nullptr;
};

/// The byte size of a stored numeric type when it is one the schemas name (float: 4 or 8 bytes, IEEE
/// float32/float64; integer: 1, 2, 4 or 8), else 0. Checked before any read: a corrupted datatype message
/// can declare any size (a 1.87 GB "float" was found by scripts/fuzz), and H5Dread / H5Aread then allocate
/// conversion buffers of that size per element inside libhdf5, past every check of ours.
inline std::size_t schema_element_size(hid_t type) {
  const H5T_class_t cls = H5Tget_class(type);
  const std::size_t size = H5Tget_size(type);
  if (cls == H5T_FLOAT) return size == 4 || size == 8 ? size : 0;
  if (cls == H5T_INTEGER) return size == 1 || size == 2 || size == 4 || size == 8 ? size : 0;
  return 0;
}

/// Closes the file `file`, written to `name`, after its write failed (a full disk), leaving nothing for
/// HDF5's exit-time cleanup: a failed H5Fclose keeps the file open inside libhdf5, whose atexit handler
/// then crashes closing it (1.10: SIGSEGV in H5F__close_cb, after the right error line). The partial
/// file is truncated to 0 bytes first, giving its blocks back, so that the close's metadata flush finds
/// room; a close that fails all the same is retried once more. The caller removes the file.
inline void close_failed_write(hid_t file, const std::string& name) {
  if (file < 0) return;
  (void)::truncate(name.c_str(), 0);
  if (H5Fclose(file) < 0 && H5Iis_valid(file) > 0) (void)H5Fclose(file);
}

}  // namespace gpukit::hdf5
