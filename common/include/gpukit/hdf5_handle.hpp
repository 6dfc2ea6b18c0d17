// RAII for the HDF5 C API (common layer), shared by libsparse's I/O and the WSM5 library: handles that close themselves, and a
// guard that silences HDF5's own error-stack printing (callers report errors themselves, naming the file
// and dataset). Includes <hdf5.h>: for implementation files, not for the public API headers.
#pragma once
#include <hdf5.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <optional>
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

/// Deflate's largest expansion: a 258-byte match coded as a 1-bit length and a 1-bit distance is 2 bits
/// for 258 bytes, 1032:1 (zlib's FAQ states the same bound); no valid deflate stream inflates further.
constexpr std::uint64_t deflate_max_ratio = 1032;

/// Why a chunked dataset's filters are not ones whose output a reader can bound (nothing when they are):
/// shuffle and fletcher32 keep the size and deflate inflates at most deflate_max_ratio; any other filter
/// (szip, n-bit, scale-offset, a plugin) is refused by its id and name. Sets `deflated`.
inline std::optional<std::string> filter_shortfall(hid_t dcpl, bool& deflated) {
  deflated = false;
  const int filters = H5Pget_nfilters(dcpl);
  if (filters < 0) return std::string("has an unreadable filter pipeline");
  for (int i = 0; i < filters; ++i) {
    unsigned flags = 0, config = 0;
    std::size_t values = 0;
    char name[64] = {};
    const H5Z_filter_t id =
        H5Pget_filter2(dcpl, static_cast<unsigned>(i), &flags, &values, nullptr, sizeof name - 1, name, &config);
    if (id == H5Z_FILTER_DEFLATE) {
      deflated = true;
    } else if (id != H5Z_FILTER_SHUFFLE && id != H5Z_FILTER_FLETCHER32) {
      std::string shown(name);  // the file's own text: printable characters only
      for (char& c : shown) c = c >= 32 && c < 127 ? c : '?';
      return "is stored with HDF5 filter " + std::to_string(id) + " (" + shown +
             "); readable are datasets stored uncompressed or with shuffle, deflate (gzip) and fletcher32";
    }
  }
  return std::nullopt;
}

/// Why a chunked dataset misses chunks (nothing when all are written): an unwritten chunk reads as fill
/// values, data the file never held. Counted with H5Dget_num_chunks (HDF5 1.10.5 or newer; older
/// libraries leave this to stored_data_shortfall's byte count).
inline std::optional<std::string> chunk_shortfall([[maybe_unused]] hid_t ds, [[maybe_unused]] hid_t dcpl) {
#if H5_VERSION_GE(1, 10, 5)
  handle space(H5Dget_space(ds), H5Sclose);
  const int rank = space.valid() ? H5Sget_simple_extent_ndims(space.get()) : -1;
  hsize_t dims[H5S_MAX_RANK] = {}, chunk[H5S_MAX_RANK] = {};
  if (rank < 0 || rank > H5S_MAX_RANK || H5Sget_simple_extent_dims(space.get(), dims, nullptr) < 0 ||
      H5Pget_chunk(dcpl, rank, chunk) != rank)
    return std::string("has an unreadable chunk layout");
  std::uint64_t expected = 1;
  for (int i = 0; i < rank; ++i) {
    if (chunk[i] == 0) return std::string("has a chunk dimension of 0");
    const std::uint64_t along = dims[i] / chunk[i] + (dims[i] % chunk[i] != 0);
    if (__builtin_mul_overflow(expected, along, &expected))
      return std::string("declares more chunks than fit 64 bits");
  }
  hsize_t written = 0;
  if (H5Dget_num_chunks(ds, space.get(), &written) < 0) return std::string("has an unreadable chunk index");
  if (written < expected)
    return "stores " + std::to_string(written) + " of its " + std::to_string(expected) +
           " chunks (an unwritten chunk reads as fill values)";
#endif
  return std::nullopt;
}

/// Why dataset `ds` does not hold all `elements` of its shape in its file, or nothing when it does; for
/// readers, before they allocate for the declared shape. HDF5 hands back fill values for unstored
/// elements (a 14 KB file declaring 10^8 cells took 13 s to read as zeros), so:
/// - the layout is contiguous, compact or chunked, and a chunked one has every chunk written and only
///   filters whose output is bounded (filter_shortfall);
/// - the storage lies within the file (a corrupted layout message or chunk index can declare any size);
/// - the storage holds elements x element size bytes, or 1/deflate_max_ratio of that when deflated:
///   what a file can make a reader allocate is then at most ~1032x its own size.
inline std::optional<std::string> stored_data_shortfall(hid_t ds, std::uint64_t elements) {
  handle dcpl(H5Dget_create_plist(ds), H5Pclose);
  handle type(H5Dget_type(ds), H5Tclose);
  handle file(H5Iget_file_id(ds), H5Fclose);
  hsize_t file_bytes = 0;
  if (!dcpl.valid() || !type.valid() || !file.valid() || H5Fget_filesize(file.get(), &file_bytes) < 0)
    return std::string("cannot be inspected (layout, type or file size)");
  const H5D_layout_t layout = H5Pget_layout(dcpl.get());
  if (layout != H5D_CONTIGUOUS && layout != H5D_COMPACT && layout != H5D_CHUNKED)
    return std::string("has a layout other than contiguous, compact or chunked");
  bool deflated = false;
  if (layout == H5D_CHUNKED) {
    if (auto why = filter_shortfall(dcpl.get(), deflated)) return why;
    if (auto why = chunk_shortfall(ds, dcpl.get())) return why;
  }
  const hsize_t stored = H5Dget_storage_size(ds);
  if (stored > file_bytes)
    return "declares " + std::to_string(stored) + " bytes of storage in a file of " + std::to_string(file_bytes);
  std::uint64_t needed = 0, reach = stored;
  const bool overflows = __builtin_mul_overflow(elements, static_cast<std::uint64_t>(H5Tget_size(type.get())), &needed);
  if (deflated && __builtin_mul_overflow(stored, deflate_max_ratio, &reach)) reach = UINT64_MAX;
  if (overflows || needed > reach)
    return "stores " + std::to_string(stored) + " bytes" + (deflated ? " deflated (inflating at most 1032:1)" : "") +
           ", its " + std::to_string(elements) + " elements need " +
           (overflows ? std::string("more than 2^64") : std::to_string(needed));
  return std::nullopt;
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
